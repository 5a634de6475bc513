#!/usr/bin/python3 -W ignore
"""secretgen.py -- secret material in its real formats, made fresh on every run.

Nothing here is a real key or password: every sample is generated now, by the
tools that make them in production where there is one (ssh-keygen, openssl,
puttygen, gpg, argon2, crypt(3) through Python's crypt module) and by this
file's own code where the format is a computation (SCRAM-SHA-256 verifiers,
NTLM hashes, signed JWTs, Proxmox tickets signed with a fresh RSA key).

    secretgen.py [--variants] [--cap N] [--seed S] > samples.jsonl

One JSON object per line:
    {"id": "...", "kind": "<secretscan kind name>" | null, "claimed": bool,
     "variant": "plain" | "crlf" | "json" | "split" | "cut",
     "stdout": "...", "stderr": "...", "truncated": bool, "secret": "...",
     "full_stdout": "..." (cut only: what the command prints before the cap)}
kind null: harmless output that must not be held (public keys, fingerprints,
hashes of files, UUIDs, ...).  claimed false: secret material the scanner
does not claim to recognise (documented in docs/operators.md); consumers
check it is NOT held, so the documentation stays true.  "secret" is a
distinctive substring of the secret (never of the harmless padding) that no
agent-readable answer may contain.  With --variants every claimed sample also
comes as CRLF, inside a JSON document, split over stdout and stderr, and cut
by the capture cap (--cap, default 65536) in the middle of the secret.
"""
import base64
import crypt
import hashlib
import hmac
import json
import os
import random
import secrets
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import uuid


def need(tool):
    if shutil.which(tool) is None:
        sys.exit(f"secretgen: {tool} is not installed (scripts/install-deps installs it)")


def run(*argv, stdin=None):
    return subprocess.run(argv, input=stdin, check=True, capture_output=True).stdout


def b64(b):
    return base64.b64encode(b).decode()


def rnd(n, alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"):
    # At least one digit and one letter (when the alphabet has both), so a
    # token never reads as a word.
    both = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        s = "".join(secrets.choice(alphabet) for _ in range(n))
        if not both or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
            return s


def md4(data):
    """MD4 (RFC 1320): OpenSSL 3 keeps it in its legacy provider only."""
    def f(x, y, z): return (x & y) | (~x & z)
    def g(x, y, z): return (x & y) | (x & z) | (y & z)
    def h(x, y, z): return x ^ y ^ z
    def rol(v, s): return ((v << s) | (v >> (32 - s))) & 0xFFFFFFFF
    msg = data + b"\x80" + b"\x00" * ((55 - len(data)) % 64) + struct.pack("<Q", len(data) * 8)
    a, b, c, d = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
    for off in range(0, len(msg), 64):
        x = struct.unpack("<16I", msg[off:off + 64])
        aa, bb, cc, dd = a, b, c, d
        for i in range(16):
            k, s = i, (3, 7, 11, 19)[i % 4]
            if i % 4 == 0: a = rol((a + f(b, c, d) + x[k]) & 0xFFFFFFFF, s)
            elif i % 4 == 1: d = rol((d + f(a, b, c) + x[k]) & 0xFFFFFFFF, s)
            elif i % 4 == 2: c = rol((c + f(d, a, b) + x[k]) & 0xFFFFFFFF, s)
            else: b = rol((b + f(c, d, a) + x[k]) & 0xFFFFFFFF, s)
        for i in range(16):
            k, s = (i % 4) * 4 + i // 4, (3, 5, 9, 13)[i % 4]
            t = 0x5A827999
            if i % 4 == 0: a = rol((a + g(b, c, d) + x[k] + t) & 0xFFFFFFFF, s)
            elif i % 4 == 1: d = rol((d + g(a, b, c) + x[k] + t) & 0xFFFFFFFF, s)
            elif i % 4 == 2: c = rol((c + g(d, a, b) + x[k] + t) & 0xFFFFFFFF, s)
            else: b = rol((b + g(c, d, a) + x[k] + t) & 0xFFFFFFFF, s)
        order = (0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15)
        for i in range(16):
            k, s = order[i], (3, 9, 11, 15)[i % 4]
            t = 0x6ED9EBA1
            if i % 4 == 0: a = rol((a + h(b, c, d) + x[k] + t) & 0xFFFFFFFF, s)
            elif i % 4 == 1: d = rol((d + h(a, b, c) + x[k] + t) & 0xFFFFFFFF, s)
            elif i % 4 == 2: c = rol((c + h(d, a, b) + x[k] + t) & 0xFFFFFFFF, s)
            else: b = rol((b + h(c, d, a) + x[k] + t) & 0xFFFFFFFF, s)
        a, b, c, d = [(v + w) & 0xFFFFFFFF for v, w in zip((a, b, c, d), (aa, bb, cc, dd))]
    return struct.pack("<4I", a, b, c, d)


def scram_verifier(password, iterations=4096):
    """What PostgreSQL stores in pg_authid.rolpassword (RFC 5802, RFC 7677)."""
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored = hashlib.sha256(client_key).digest()
    server = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored)}:{b64(server)}"


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jwt(claims, key):
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    sig = b64url(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"


class Gen:
    def __init__(self, tmp):
        self.tmp = tmp
        self.out = []

    def path(self, name):
        return os.path.join(self.tmp, name)

    def add(self, sid, kind, text, secret, claimed=True):
        assert secret in text, sid
        self.out.append({"id": sid, "kind": kind, "claimed": claimed, "text": text, "secret": secret})

    def harmless(self, sid, text):
        self.out.append({"id": sid, "kind": None, "claimed": True, "text": text, "secret": ""})

    # -- private keys
    def keys(self):
        need("ssh-keygen")
        need("openssl")
        for t in ("ed25519", "ecdsa", "rsa"):
            p = self.path(f"id_{t}")
            run("ssh-keygen", "-q", "-t", t, *(["-b", "2048"] if t == "rsa" else []), "-N", "",
                "-C", "outhold@test", "-f", p)
            key = open(p).read()
            self.add(f"openssh-{t}", "openssh_private_key", key, key.splitlines()[2])
            self.harmless(f"openssh-{t}-public", open(p + ".pub").read())
            self.harmless(f"openssh-{t}-fingerprint", run("ssh-keygen", "-lf", p + ".pub").decode())
            self.harmless(f"openssh-{t}-fingerprint-md5",
                          run("ssh-keygen", "-E", "md5", "-lf", p + ".pub").decode())
            if t == "ed25519":
                enc = base64.encodebytes(key.encode()).decode()
                self.add("openssh-base64", "encoded_private_key", enc, enc.splitlines()[1])
        p = self.path("enc_ed25519")
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", p)
        key = open(p).read()
        self.add("openssh-encrypted", "openssh_private_key", key, key.splitlines()[2])
        p = self.path("pem_rsa")
        run("ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "", "-f", p)
        key = open(p).read()
        self.add("pem-rsa-ssh-keygen", "private_key", key, key.splitlines()[3])
        pkcs8 = run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048").decode()
        self.add("pem-pkcs8-rsa", "private_key", pkcs8, pkcs8.splitlines()[3])
        ec = run("openssl", "ecparam", "-genkey", "-name", "prime256v1", "-noout").decode()
        self.add("pem-ec", "private_key", ec, ec.splitlines()[1])
        ed = run("openssl", "genpkey", "-algorithm", "ED25519").decode()
        self.add("pem-ed25519", "private_key", ed, ed.splitlines()[1])
        encpk = run("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:x",
                    stdin=pkcs8.encode()).decode()
        self.add("pem-pkcs8-encrypted", "private_key", encpk, encpk.splitlines()[3])
        trad = run("openssl", "pkey", "-traditional", stdin=pkcs8.encode()).decode()
        self.add("pem-rsa-traditional", "private_key", trad, trad.splitlines()[3])
        self.harmless("pem-public-key", run("openssl", "pkey", "-pubout", stdin=pkcs8.encode()).decode())
        cert = run("openssl", "req", "-x509", "-key", "/dev/stdin", "-subj", "/CN=outhold", "-days", "1",
                   stdin=pkcs8.encode()).decode()
        self.harmless("pem-certificate", cert)
        self.harmless("certificate-text", run("openssl", "x509", "-noout", "-text", "-fingerprint",
                                              stdin=cert.encode()).decode())
        self.pkcs8, self.cert = pkcs8, cert
        # The Proxmox cluster's own: /etc/pve/priv/authkey.key is an RSA key.
        auth = run("openssl", "genrsa", "2048").decode()
        self.add("pve-authkey", "private_key", auth, auth.splitlines()[2])
        self.authkey = auth
        # PuTTY, both file versions.
        need("puttygen")
        for ver in ("2", "3"):
            p = self.path(f"k{ver}.ppk")
            run("puttygen", "-q", "-t", "ed25519", "-o", p, "--new-passphrase", "/dev/null",
                "--ppk-param", f"version={ver}")
            ppk = open(p).read()
            line = next(x for x in ppk.splitlines() if not x.startswith(("PuTTY", "Encryption",
                        "Comment", "Public-Lines", "Private-Lines", "Private-MAC")) and len(x) > 20
                        and ppk.index(x) > ppk.index("Private-Lines"))
            self.add(f"putty-v{ver}", "putty_private_key", ppk, line)
        # PGP (gpg in a throwaway home).
        need("gpg")
        home = self.path("gnupg")
        os.mkdir(home, 0o700)
        g = ["gpg", "--homedir", home, "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", ""]
        run(*g, "--quick-gen-key", "outhold <outhold@test>", "ed25519", "sign", "1d")
        armored = run(*g, "--armor", "--export-secret-keys").decode()
        subprocess.run(["gpgconf", "--homedir", home, "--kill", "gpg-agent"], check=False)
        self.add("pgp-secret-key", "pgp_private_key", armored, armored.splitlines()[3])
        self.harmless("pgp-public-key", run(*g, "--armor", "--export").decode())

    # -- password hashes
    def hashes(self):
        pw = rnd(14)
        for name, salt in (("md5crypt", crypt.METHOD_MD5), ("sha256crypt", crypt.METHOD_SHA256),
                           ("sha512crypt", crypt.METHOD_SHA512), ("bcrypt", crypt.METHOD_BLOWFISH)):
            h = crypt.crypt(pw, crypt.mksalt(salt))
            self.add(name, "password_hash", h + "\n", h[-20:])
        for name, prefix in (("yescrypt", "$y$j9T$"), ("gost-yescrypt", "$gy$j9T$"), ("scrypt", "$7$CU..../....")):
            h = crypt.crypt(pw, prefix + rnd(16, "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))
            assert h.startswith(prefix[:3]), h
            self.add(name, "password_hash", h + "\n", h[-20:])
        y = crypt.crypt(pw, "$y$j9T$" + rnd(16))
        shadow = ("root:%s:19700:0:99999:7:::\ndaemon:*:19700:0:99999:7:::\n"
                  "airlock:!:19700:0:99999:7:::\n" % y)
        self.add("etc-shadow-yescrypt", "password_hash", shadow, y[-20:])
        des = crypt.crypt(pw, rnd(2, "./abcdefghijklmnopqrstuvwxyz"))
        assert len(des) == 13, des
        self.add("etc-shadow-des", "shadow_line",
                 "bin:*:19700:0:99999:7:::\nlegacy:%s:19700:0:99999:7:::\n" % des, des)
        h5 = crypt.crypt(pw, crypt.mksalt(crypt.METHOD_SHA256))
        self.add("pve-shadow-cfg", "password_hash", "admin:%s:\n" % h5, h5[-30:])
        apr = run("openssl", "passwd", "-apr1", pw).decode().strip()
        self.add("htpasswd-apr1", "password_hash", f"admin:{apr}\n", apr[-16:])
        need("argon2")
        a2 = run("argon2", rnd(16), "-id", "-e", stdin=pw.encode()).decode().strip()
        self.add("argon2id", "password_hash", a2 + "\n", a2[-20:])
        salt = os.urandom(8)
        ssha = "{SSHA}" + b64(hashlib.sha1(pw.encode() + salt).digest() + salt)
        self.add("ldap-ssha", "ldap_password_hash", f"userPassword: {ssha}\n", ssha[6:26])
        ldif = b64(ssha.encode())
        self.add("ldap-ldif-base64", "password_setting", f"dn: uid=bot,dc=example\nuserPassword:: {ldif}\n",
                 ldif[:20])
        sv = scram_verifier(pw)
        self.add("scram-pg-authid", "scram_verifier",
                 " rolname | rolpassword\n---------+------------\n app      | %s\n" % sv, sv.split("$")[2][:30])
        md5 = "md5" + hashlib.md5((pw + "app").encode()).hexdigest()
        self.add("postgres-md5", "postgres_md5_password", f"app|{md5}\n", md5[3:])
        nt = md4(pw.encode("utf-16-le")).hex()
        lm = "aad3b435b51404eeaad3b435b51404ee"
        self.add("pwdump", "ntlm_hash", f"Administrator:500:{lm}:{nt}:::\n", nt)
        self.add("smbpasswd", "ntlm_hash",
                 f"bot:1000:{'X' * 32}:{nt.upper()}:[U          ]:LCT-66A1B2C3:\n", nt.upper())
        chal, proof = os.urandom(8).hex(), os.urandom(16).hex()
        self.add("netntlmv2", "ntlm_hash", f"bot::EXAMPLE:{chal}:{proof}:{os.urandom(40).hex()}\n", proof)
        self.harmless("etc-passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                      "airlock:x:1000:1000:,,,:/home/airlock:/bin/bash\n")
        self.harmless("etc-shadow-locked", "root:*:19700:0:99999:7:::\nsshd:!:19700::::::\nbot:!*:19700:0:99999:7:::\n")
        self.harmless("shell-positional", 'echo "$1$2"; set -- "$@"; x=$5$6\nprintf "%s" "${1}"\n')

    # -- Proxmox
    def proxmox(self):
        u = str(uuid.uuid4())
        self.add("pve-api-token-header", "pve_api_token",
                 f"Authorization: PVEAPIToken=root@pam!monitoring={u}\n", u)
        u = str(uuid.uuid4())
        self.add("pve-token-cfg", "pve_api_token", f"root@pam!monitoring {u}\nbot@pve!ci {uuid.uuid4()}\n", u)
        u = str(uuid.uuid4())
        self.add("pvesh-token-create-json", "pve_api_token",
                 json.dumps({"full-tokenid": "root@pam!ci", "info": {"privsep": 1}, "value": u}) + "\n", u)
        u = str(uuid.uuid4())
        self.add("pvesh-token-create-table", "pve_api_token",
                 "┌──────────────┬──────────────────────────────────────┐\n"
                 "│ key          │ value                                │\n"
                 "╞══════════════╪══════════════════════════════════════╡\n"
                 "│ full-tokenid │ root@pam!ci                          │\n"
                 "├──────────────┼──────────────────────────────────────┤\n"
                 f"│ value        │ {u} │\n"
                 "└──────────────┴──────────────────────────────────────┘\n", u)
        data = f"PVE:root@pam:{int(time.time()):08X}"
        kp = self.path("authkey.key")
        open(kp, "w").write(self.authkey)
        sig = b64(run("openssl", "dgst", "-sha1", "-sign", kp, stdin=data.encode()))
        ticket = f"{data}::{sig}"
        self.add("pve-ticket", "pve_ticket",
                 json.dumps({"data": {"username": "root@pam", "ticket": ticket,
                                      "CSRFPreventionToken": f"{int(time.time()):08X}:{rnd(43)}"}}) + "\n",
                 sig[:40])
        enc = ticket.replace(":", "%3A").replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        self.add("pve-auth-cookie", "pve_ticket", f"Cookie: PVEAuthCookie={enc}\n", enc[40:80])
        tsec = base64.b32encode(os.urandom(20)).decode()
        self.add("pve-tfa-totp", "totp_secret",
                 json.dumps({"users": {"root@pam": {"totp": [{"enable": True, "entry":
                            f"otpauth://totp/pve:root@pam?secret={tsec}&digits=6&issuer=pve"}]}}}) + "\n", tsec)
        cephkey = b64(struct.pack("<HIIH", 1, int(time.time()), 0, 16) + os.urandom(16))
        self.add("ceph-keyring", "ceph_key",
                 f"[client.admin]\n\tkey = {cephkey}\n\tcaps mds = \"allow *\"\n\tcaps mon = \"allow *\"\n",
                 cephkey[2:38])
        self.harmless("qm-config", f"boot: order=scsi0\ncores: 2\nmemory: 2048\nname: web01\n"
                      f"net0: virtio=BC:24:11:2A:3B:4C,bridge=vmbr0,firewall=1\nsmbios1: uuid={uuid.uuid4()}\n"
                      f"vmgenid: {uuid.uuid4()}\nscsi0: local-lvm:vm-101-disk-0,size=32G\n")
        self.harmless("pvesh-resources", json.dumps([{"id": "qemu/101", "node": "hubris", "type": "qemu",
                      "vmid": 101, "name": "web01", "status": "running", "maxmem": 2147483648},
                      {"id": "lxc/201", "node": "hubris", "type": "lxc", "vmid": 201}]) + "\n")
        self.harmless("pvesh-token-list", json.dumps([{"tokenid": "ci", "privsep": 1, "expire": 0,
                      "comment": "deploys"}]) + "\n")
        self.harmless("uuids", "".join(f"{uuid.uuid4()}\n" for _ in range(5)) +
                      f'/dev/sda1: UUID="{uuid.uuid4()}" TYPE="ext4" PARTUUID="{uuid.uuid4()}"\n')

    # -- cloud, kube, tokens
    def cloud(self):
        akid = "AKIA" + rnd(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        sak = rnd(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        self.add("aws-credentials", "aws_access_key",
                 f"[default]\naws_access_key_id = {akid}\naws_secret_access_key = {sak}\n", akid)
        self.add("aws-secret-only", "password_setting", f"aws_secret_access_key={sak}\n", sak)
        asia = "ASIA" + rnd(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        self.add("aws-sts-json", "password_setting",
                 json.dumps({"Credentials": {"SecretAccessKey": sak, "SessionToken": rnd(200),
                            "Expiration": "2030-01-01T00:00:00Z", "AccessKeyId": asia}}, indent=4) + "\n", sak)
        sa = {"type": "service_account", "project_id": "outhold", "private_key_id": os.urandom(20).hex(),
              "private_key": self.pkcs8, "client_email": "bot@outhold.iam.gserviceaccount.com",
              "client_id": str(random.randrange(10**20, 10**21)), "token_uri": "https://oauth2.googleapis.com/token"}
        text = json.dumps(sa, indent=2) + "\n"
        self.add("gcp-service-account", "gcp_service_account_key", text, self.pkcs8.splitlines()[3])
        key = "AIza" + rnd(35, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        self.add("gcp-api-key", "google_token", f"GOOGLE_MAPS_KEY {key}\n", key)
        acct = b64(os.urandom(64))
        self.add("azure-storage", "azure_key",
                 f"DefaultEndpointsProtocol=https;AccountName=outhold;AccountKey={acct};EndpointSuffix=core.windows.net\n",
                 acct[:40])
        sas = b64(os.urandom(32)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        self.add("azure-sas", "azure_key",
                 f"https://outhold.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&sig={sas}\n",
                 sas)
        sbk = b64(os.urandom(32))
        self.add("azure-servicebus", "azure_key",
                 f"Endpoint=sb://outhold.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sbk}\n",
                 sbk[:30])
        ca = b64(self.cert.encode())
        ck = b64(self.pkcs8.encode())
        kube = (f"apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n"
                f"    server: https://10.0.0.1:6443\n  name: k\nusers:\n- name: admin\n  user:\n"
                f"    client-certificate-data: {ca}\n    client-key-data: {ck}\n")
        self.add("kubeconfig-client-key", "kube_credential", kube, ck[40:100])
        satoken = jwt({"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:default:bot"}, os.urandom(32))
        self.add("kubeconfig-sa-token", "jwt",
                 f"apiVersion: v1\nkind: Config\nusers:\n- name: bot\n  user:\n    token: {satoken}\n", satoken.split(".")[2])
        static = rnd(32)
        self.add("kubeconfig-static-token", "password_setting",
                 f"users:\n- name: bot\n  user:\n    token: {static}\n", static)
        self.harmless("kubeconfig-no-user-secret", f"apiVersion: v1\nclusters:\n- cluster:\n"
                      f"    certificate-authority-data: {ca}\n    server: https://10.0.0.1:6443\n")
        tok = rnd(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        self.add("bearer", "bearer_token", f"> GET /api HTTP/1.1\n> Authorization: Bearer {tok}\n", tok)
        basic = b64(f"bot:{rnd(16)}".encode())
        self.add("basic", "basic_auth", f"Authorization: Basic {basic}\n", basic)
        j = jwt({"sub": "bot", "iat": int(time.time()), "scope": "admin"}, os.urandom(32))
        self.add("jwt", "jwt", f"token={j}\n", j.split(".")[1])
        for sid, prefix, body in (("github", "ghp_", rnd(36)), ("gitlab", "glpat-", rnd(20)),
                                  ("slack", "xoxb-", rnd(12, "0123456789") + "-" + rnd(24)),
                                  ("vault", "hvs.", rnd(90)), ("npm", "npm_", rnd(36)),
                                  ("stripe", "sk_live_", rnd(24))):
            self.add(f"api-token-{sid}", "api_token", f"{sid}: using {prefix}{body}\n", body)
        vt = rnd(24)
        self.add("vault-token-file", "api_token", "hvs." + vt + "\n", vt)
        wg = b64(os.urandom(32))
        self.add("wireguard", "wireguard_key",
                 f"[Interface]\nAddress = 10.9.0.1/24\nPrivateKey = {wg}\nListenPort = 51820\n", wg)
        docker = b64(f"bot:{rnd(20)}".encode())
        self.add("docker-config", "password_setting",
                 json.dumps({"auths": {"registry.example": {"auth": docker}}}, indent="\t") + "\n", docker)
        oauth = "ya29." + rnd(60, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        self.add("rclone-token", "google_token",
                 "[gdrive]\ntype = drive\ntoken = " + json.dumps({"access_token": oauth, "token_type": "Bearer",
                 "refresh_token": "1//0" + rnd(60), "expiry": "2030-01-01T00:00:00Z"}) + "\n", oauth)
        self.harmless("sha256sum", "".join(f"{os.urandom(32).hex()}  /usr/bin/{n}\n" for n in ("ls", "cat", "sh")))
        self.harmless("md5sum", "".join(f"{os.urandom(16).hex()}  /etc/{n}\n" for n in ("hosts", "fstab")))
        self.harmless("git-log", "".join(f"commit {os.urandom(20).hex()}\nAuthor: a <a@b>\n\n    fix\n" for _ in range(3)))
        self.harmless("docker-digest", f"nginx@sha256:{os.urandom(32).hex()}\n")
        self.harmless("random-base64-cert", b64(self.cert.encode()) + "\n")

    # -- passwords in files and settings
    def passwords(self):
        pw = rnd(18)
        self.add("pgpass", "pgpass_line", f"db.example:5432:app:app:{pw}\n*:*:*:replicator:{rnd(12)}\n", pw)
        self.add("url-postgres", "url_credentials", f"DATABASE_URL=postgresql://app:{pw}@db.prod.acme.internal:5432/app\n", pw)
        gh = "ghp_" + rnd(36)
        self.add("git-credentials", "url_credentials", f"https://bot:{gh}@github.com\n", gh)
        self.add("netrc", "netrc_password", f"machine api.example login bot password {pw}\n", pw)
        self.add("msmtprc", "netrc_password", f"account default\nhost smtp.example\nuser bot\npassword {pw}\n", pw)
        self.add("sasl-passwd", "sasl_password", f"[smtp.example.com]:587 relay@example.com:{pw}\n", pw)
        self.add("ipsec-secrets", "ipsec_secret", f'# ipsec.secrets\n%any %any : PSK "{pw}"\n', pw)
        self.add("mysql-debian-cnf", "password_setting",
                 f"[client]\nhost     = localhost\nuser     = debian-sys-maint\npassword = {pw}\n", pw)
        self.add("env-file", "password_setting", f"APP_ENV=prod\nDB_PASSWORD={pw}\n", pw)
        self.add("cli-flag", "password_setting", f"root  1234  0.0 /usr/bin/app --password={pw} --port 80\n", pw)
        cs = rnd(32)
        self.add("json-client-secret", "password_setting",
                 json.dumps({"client_id": "bot", "client_secret": cs}) + "\n", cs)
        self.add("yaml-password", "password_setting", f"database:\n  user: app\n  password: {pw}  # rotate\n", pw)
        ak = rnd(32)
        self.add("header-api-key", "password_setting", f"X-Api-Key: {ak}\n", ak)
        self.harmless("sshd-config", "PasswordAuthentication no\nPermitEmptyPasswords no\n"
                      "#PasswordAuthentication yes\nKbdInteractiveAuthentication no\n")
        self.harmless("env-output", "SHELL=/bin/bash\nPWD=/root\nOLDPWD=/\nHOME=/root\nLANG=C.UTF-8\n"
                      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nTERM=xterm\n"
                      "PASSWORD_FILE=/run/secrets/db\nSSH_AUTH_SOCK=/tmp/ssh-x/agent.1\n")
        self.harmless("placeholders", "password: ********\npassword = <hidden>\nDB_PASSWORD=${DB_PASSWORD}\n"
                      "password: \"{{ vault_db_password }}\"\n\"token\": null\npasswd: password updated successfully\n"
                      "Password for user postgres:\nurl: postgres://user:password@host/db\n")
        self.harmless("times-and-colons", "12:34:56\n1:2:3:4:5\n10:20:30:40:50\n2024-01-01 12:00:00:123 x\n"
                      "fe80::1:2:3:4/64\n52:54:00:12:34:56\n")
        self.harmless("ip-a", "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN\n"
                      "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
                      "    inet 127.0.0.1/8 scope host lo\n    inet6 ::1/128 scope host\n")
        self.harmless("journal", "Jan 01 12:00:00 hubris sshd[812]: Accepted publickey for root from 192.0.2.10 "
                      "port 50022 ssh2: ED25519 SHA256:" + b64(os.urandom(32)).rstrip("=") + "\n"
                      "Jan 01 12:00:01 hubris systemd[1]: Started session-4.scope.\n"
                      "Jan 01 12:00:02 hubris sshd[813]: Failed password for invalid user admin from 192.0.2.11\n")
        self.harmless("os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\n'
                      'VERSION_ID="12"\nID=debian\nHOME_URL="https://www.debian.org/"\n')
        # Lines that once read as secrets in a scan of a Debian system's
        # documentation, source and configuration (/usr/share/doc, /etc,
        # Python's and Perl's libraries): code, prose, examples.
        self.harmless("source-and-docs",
                      "    password = argv[3];\n    token = self.get_token()\nToken = Keyword.Type\n"
                      "        key_password=key_password,\n    private_key: \"_RSAPrivateKey\",\n"
                      "  1. http://wiki.whatwg.org/wiki/Web_Encodings\n[0] https://www.openssh.com/\n"
                      "\tslave.pcm plug:trident\n.variablelist td:first-child\n"
                      '        if url == "tag:launchpad.net:2008:redacted":\n'
                      "T:45:1024 :189:99343\nnew URL('https://abc:xyz@example.com');\n"
                      "    SEC_ERROR_BAD_PASSWORD = SEC_ERROR_BASE + 15,\n"
                      "passphrase = 'Password used to generate key'\nmy $password = $param->{password};\n"
                      "    password => 'x',\n")
        self.harmless("bearer-prose", "The API takes Bearer tokens; see Bearer authentication in the docs.\n")

    # -- documented as not recognised: encoded, compressed, encrypted, custom
    def not_claimed(self):
        key = open(self.path("id_ed25519")).read()
        shifted = b64(b"x" + key.encode())
        self.add("base64-offset", "openssh_private_key", shifted + "\n", shifted[40:80], claimed=False)
        gz = b64(run("gzip", "-c", stdin=key.encode()))
        self.add("gzip-base64", "openssh_private_key", gz + "\n", gz[40:80], claimed=False)
        hx = key.encode().hex()
        self.add("hex-dump", "openssh_private_key", hx + "\n", hx[100:160], claimed=False)
        body = "".join(key.splitlines()[1:-1])
        self.add("key-body-without-header", "openssh_private_key", body + "\n", body[20:60], claimed=False)
        pw = rnd(18)
        self.add("chap-secrets", "password_setting", f'bot * "{pw}" *\n', pw, claimed=False)
        self.add("custom-format", "password_setting", f"db-secret-of-the-day {pw}\n", pw, claimed=False)
        self.add("split-marker", "openssh_private_key", "-----BEGIN OPENSSH PRIV\nATE KEY-----\n" + body[:70] + "\n",
                 body[20:60], claimed=False)


def variants(s, cap):
    text = s["text"]
    plain = dict(s, variant="plain", stdout=text, stderr="", truncated=False)
    yield plain
    if s["kind"] is None or not s["claimed"]:
        return
    yield dict(s, variant="crlf", stdout=text.replace("\n", "\r\n"), stderr="", truncated=False)
    yield dict(s, variant="json", stdout=json.dumps({"path": "/srv/x", "content": text}) + "\n",
               stderr="", truncated=False)
    lines = text.splitlines(keepends=True)
    half = len(lines) // 2
    if half > 0:
        yield dict(s, variant="split", stdout="".join(lines[:half]), stderr="".join(lines[half:]),
                   truncated=False)
    # Cut by the cap inside the secret: harmless lines first, so that the
    # cap (in bytes, as the transport counts) falls a few bytes into the
    # secret, and the capture keeps only what fits (everything before the
    # secret, and the start of it).
    # Twice: eight bytes of it kept, and twelve (or half of it).
    tb, sb = text.encode(), s["secret"].encode()
    at = tb.index(sb)
    for k in sorted({min(8, len(sb) // 2), min(12, len(sb) // 2)}):
        if at + k >= cap or k < 4:
            continue
        line = b"".join(b"filler line %06d of harmless output\n" % i for i in range(cap // 36 + 2))
        pad = line[: cap - at - k - 1] + b"\n"
        full = pad + tb
        yield dict(s, variant="cut", stdout=full[:cap].decode("utf-8", "replace"), stderr="",
                   truncated=True, secret=sb[:k].decode(), full_stdout=full.decode())


def main():
    want_variants = "--variants" in sys.argv
    cap = 65536
    if "--cap" in sys.argv:
        cap = int(sys.argv[sys.argv.index("--cap") + 1])
    with tempfile.TemporaryDirectory(prefix="secretgen.") as tmp:
        g = Gen(tmp)
        g.keys()
        g.hashes()
        g.proxmox()
        g.cloud()
        g.passwords()
        g.not_claimed()
        for s in g.out:
            for v in (variants(s, cap) if want_variants else [dict(s, variant="plain", stdout=s["text"],
                                                                   stderr="", truncated=False)]):
                v.pop("text", None)
                print(json.dumps(v))


if __name__ == "__main__":
    main()
