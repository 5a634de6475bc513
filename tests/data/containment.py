#!/usr/bin/env python3
"""Generator and checker for what the classifier tells the jail.

Usage: containment.py SEED COUNT AIRLOCK POLICY GATE

Generates COUNT commands (fixed SEED) in families, classifies them with
`AIRLOCK classify --batch --json --policy POLICY --gate GATE` and checks each:

  network-send    a program that sends traffic, in a form that is not a
                  harmless read or to a destination GATE does not allow:
                  at least config_mutation, "sends network traffic to",
                  and no network view
  network-read    a harmless read (HTTP GET/HEAD, echo request, DNS lookup)
                  of a destination GATE allows: read_only with the network
                  view; and without GATE, the same command is at least
                  config_mutation (so the allow list is what lets it in)
  net-view        an observation of the target's network state, alone or
                  piped into text filters: read_only with the network view;
                  mixed with a program that is neither, without it
  secrets         secret material reached through the command's own values,
                  /proc, globs, trees read whole, SQL and key-value clients,
                  raw disks and memory: at least config_mutation, "reads
                  secret material"
  secrets-clean   the same shapes over files that hold no secret: read_only
  root-tier       one proven invocation of a program that needs uid 0, piped
                  into filters that read only the pipe: needs_root; any other
                  shape: not
  write-set       reversible_low changes in a guest: exactly the paths they
                  write ("dir/" below dir), or the action rule they name
  unconfinable    changes that name no path and no action, or write paths
                  known only at run time: at least config_mutation

The programs' options and forms are taken from their manuals (curl(1),
wget(1), ping(8), dig(1), nc(1), socat(1), bash(1) "Parameter Expansion" and
"Redirections", grep(1), tar(1), rsync(1) ...), not from the policy.
Prints one line per family and every failure; exits 1 when any check fails.
"""
import json
import random
import shlex
import subprocess
import sys

SEED = int(sys.argv[1])
COUNT = int(sys.argv[2])
BIN, POLICY, GATE = sys.argv[3], sys.argv[4], sys.argv[5]
rng = random.Random(SEED)
pick = rng.choice

ALLOWED = ["localhost", "127.0.0.1", "10.0.0.5", "example.com", "www.example.com",
           "mirror.example.org"]
FOREIGN = ["203.0.113.7", "evil.test", "example.com.evil.test", "198.51.100.2",
           "exfil.invalid"]
WRAP = ["", "", "", "sudo ", "timeout 20 ", "nice -n 10 ", "env LC_ALL=C ", "stdbuf -oL "]


def wrapped(cmd):
    return pick(WRAP) + cmd


def url(host, path="/x", scheme="https"):
    return "%s://%s%s" % (scheme, host, path)


# ---- network clients that send --------------------------------------------------------
def network_send():
    a, f = pick(ALLOWED), pick(FOREIGN)
    forms = [
        # curl(1): bodies, uploads, forms, methods, redirects, files, proxies, sockets
        "curl -d 'a=1' " + url(a), "curl --data-binary @/tmp/x " + url(a),
        "curl --data-urlencode q=x " + url(a), "curl -F f=@/tmp/x " + url(a),
        "curl -T /tmp/x " + url(a), "curl --json '{}' " + url(a),
        "curl -X POST " + url(a), "curl --request PUT " + url(a), "curl -XDELETE " + url(a),
        "curl -X PATCH " + url(a), "curl -L " + url(a), "curl --location " + url(a),
        "curl -sSL " + url(a), "curl -o /tmp/x " + url(a), "curl -O " + url(a, "/f.bin"),
        "curl -K /tmp/curlrc " + url(a), "curl -u u:p " + url(a), "curl -b /tmp/jar " + url(a),
        "curl -x http://%s:3128 %s" % (f, url(a)), "curl --proxy socks5h://%s %s" % (f, url(a)),
        "curl --unix-socket /run/docker.sock http://localhost/containers/json",
        "curl --resolve %s:443:%s %s" % (a, f, url(a)),
        "curl --connect-to %s:443:%s:443 %s" % (a, f, url(a)), "curl -n " + url(a),
        "curl -s " + url(f), "curl -s " + url(a + "." + f), "curl -s http://%s@%s/" % (a, f),
        "curl -s ftp://%s/pub/x" % a, "curl -s dict://%s:11211/stats" % a,
        "curl -s gopher://%s:6379/_INFO" % a, "curl -s telnet://%s:25" % a,
        "curl -s smtp://%s" % a, "curl -s ldap://%s/" % a, "curl -s tftp://%s/x" % a,
        "curl -s %s/path" % a, "curl -s \"$U\"", "curl -s http://$H/x",
        "curl -s %s %s" % (url(a), url(f)), "https_proxy=http://%s:3128 curl -s %s" % (f, url(a)),
        "echo %s | xargs curl -s" % url(a),
        # wget(1): redirects followed by default, files, bodies, lists, recursion
        "wget -qO- " + url(a), "wget -q -O - " + url(a), "wget --spider " + url(a),
        "wget -O /tmp/x --max-redirect=0 " + url(a), "wget --post-data=a=1 -O - " + url(a),
        "wget --method=POST -O - --max-redirect=0 " + url(a), "wget -i /tmp/urls -O -",
        "wget -r --max-redirect=0 " + url(a), "wget -qO- --max-redirect=0 " + url(f),
        "wget -e use_proxy=on -qO- --max-redirect=0 " + url(a),
        # ping(8), traceroute, scanners
        "ping -c 3 " + f, "ping -f -c 100 10.0.0.5", "ping -b 10.0.0.255", "ping -p ff00 -c 1 10.0.0.5",
        "ping -l 5 -c 10 10.0.0.5", "ping -c 1 -I eth0 10.0.0.5", "ping -R -c 1 10.0.0.5",
        "traceroute " + a, "tracepath " + a, "mtr -r -c 1 " + a, "nmap -sT " + a,
        "arping -c 1 10.0.0.5", "fping " + a, "ssh-keyscan " + a, "whois example.com",
        "iperf3 -c " + a, "speedtest",
        # DNS: lookups that leave the harmless form or the allowed names
        "dig " + f, "dig +trace example.com", "dig +nssearch example.com", "dig -f /tmp/names",
        "dig -x 10.0.0.5", "dig @%s example.com" % f, "host -l example.com", "host " + f,
        "nslookup %s %s" % ("example.com", f), "drill example.com", "delv example.com",
        # raw sockets, remote shells and copies
        "nc %s 80" % a, "nc -u %s 53" % a, "nc -zv %s 22" % a, "ncat %s 443 --ssl" % a,
        "nc -l -p 8080", "socat - TCP:%s:80" % a, "socat TCP-LISTEN:9000 -",
        "socat - UDP:%s:53" % a, "socat - OPENSSL:%s:443" % a, "telnet %s 25" % a,
        "openssl s_client -connect %s:443 </dev/null" % a, "openssl s_client -connect " + a,
        "ssh %s uptime" % a, "ssh -p 2222 root@%s" % a, "scp /tmp/x %s:/tmp/" % a,
        "sftp %s" % a, "rsync -a /tmp/x %s:/tmp/" % a, "rsync rsync://%s/mod/ /tmp/m/" % a,
        "git push", "git push origin main", "git fetch --all", "git pull", "git ls-remote " + url(a, "/r.git"),
        "git clone %s /tmp/r" % url(a, "/r.git"), "git remote update", "git submodule update --init",
        "git -C /opt/app fetch",
        # database and key-value clients
        "psql -h %s -c 'select 1'" % f, "psql -h %s -c 'delete from t'" % a,
        "psql 'host=%s dbname=x' -c 'select 1'" % f, "psql postgresql://%s/x -c 'select 1'" % f,
        "mysql -h %s -e 'show databases'" % f, "redis-cli -h %s ping" % a, "redis-cli info",
        "redis-cli -u redis://%s:6379 get k" % a, "mongosh --host %s --eval 1" % a,
        "pg_isready -h " + a, "ldapsearch -H ldap://%s -x" % a, "showmount -e " + a,
        "rpcinfo -p " + a, "smbclient -L " + a, "ntpdate -q " + a, "snmpwalk -v2c -c public " + a,
        # package managers' fetches
        "apt-get update", "apt update", "apt-get download nfs-common", "apt changelog bash",
        "apt-get source bash", "apt-file update",
        # the shell's and awk's own connections
        "exec 3<>/dev/tcp/%s/80" % a, "echo x > /dev/tcp/%s/6379" % a,
        "cat < /dev/tcp/%s/22" % a, "timeout 1 bash -c '</dev/tcp/%s/22'" % a,
        "echo ping > /dev/udp/%s/53" % a,
        "gawk 'BEGIN { print \"GET /\" |& \"/inet/tcp/0/%s/80\" }'" % a,
    ]
    if rng.randrange(25) == 0:
        # code that opens sockets: opaque, and says why
        return {"min": 2, "reason": "sends network traffic", "net": False}, pick([
            "python3 -c 'import socket; socket.create_connection((\"%s\", 80))'" % a,
            "perl -MIO::Socket::INET -e 'IO::Socket::INET->new(\"%s:80\")'" % a,
            "python3 -c 'import urllib.request as u; u.urlopen(\"http://%s/\")'" % a,
            "node -e 'const net = require(\"net\"); net.createConnection(80, \"%s\")'" % a])
    cmd = pick(forms)
    if rng.randrange(5) == 0 and "|" not in cmd and "<" not in cmd and not cmd.startswith(("exec", "https_proxy")):
        cmd = "bash -c " + shlex.quote(cmd)
    elif not cmd.startswith(("exec", "https_proxy", "git ", "apt", "echo x", "echo ping")):
        cmd = wrapped(cmd)
    return {"min": 2, "reason": "sends network traffic", "net": False}, cmd


# ---- harmless reads of allowed destinations ------------------------------------------
def network_read():
    a = pick(ALLOWED)
    forms = [
        "curl -s " + url(a), "curl -sS " + url(a, "/status.json"), "curl -fsS " + url(a),
        "curl -sI " + url(a), "curl --head " + url(a),
        "curl -s -H 'Accept: application/json' " + url(a), "curl -sk https://%s:8006/api2/json/version" % a,
        "curl -s --max-time 5 " + url(a, "/x?y=1"), "curl -s -A probe/1 " + url(a, "", "http"),
        "curl --compressed -s " + url(a), "curl -s -4 --connect-timeout 3 " + url(a),
        "wget -qO- --max-redirect=0 " + url(a), "wget -q -O - --max-redirect 0 " + url(a),
        "wget --spider --max-redirect=0 " + url(a), "wget -S --spider --max-redirect=0 " + url(a),
        "ping -c 1 " + pick(["10.0.0.5", "127.0.0.1", "localhost"]),
        "ping -c 3 -W 1 -q 10.0.0.5", "ping6 -c 1 localhost", "dig +short " + pick(["example.com", "www.example.com"]),
        "dig example.com mx", "dig @127.0.0.1 example.com", "dig +noall +answer www.example.com",
        "host example.com", "host -t mx example.com", "nslookup www.example.com",
    ]
    cmd = pick(forms)
    if rng.randrange(3) == 0:
        cmd += pick([" | head -5", " | grep -c x", " | jq .", " 2>/dev/null", " | wc -l"])
    if rng.randrange(4) == 0:
        cmd = pick(["sudo ", "timeout 10 ", "nice -n 5 "]) + cmd
    return {"cls": "read_only", "net": True, "reason": "network-read-allowed",
            "ungated_min": 2}, cmd


# ---- reading the network view ------------------------------------------------------------
VIEWS = ["ip a", "ip -br addr show", "ip addr show dev vmbr0", "ip r", "ip route show table all",
         "ip route get 1.1.1.1", "ip -s link", "ip link show vmbr0", "ip neigh", "ip -6 r",
         "ip -j -p a", "ip rule list", "ip maddr", "ss -tulpn", "ss -s", "ss -tanp",
         "netstat -tlnp", "netstat -rn", "nft list ruleset", "nft list tables",
         "nft list table inet filter", "iptables -L -n -v", "iptables -S", "ip6tables -L",
         "iptables -t nat -L -n", "bridge link show", "bridge fdb show", "bridge vlan show",
         "ethtool eth0", "ethtool -i eth0", "ethtool -S eth0", "ethtool -k eth0", "arp -n",
         "route -n", "ifconfig", "ifconfig eth0", "sysctl net.ipv4.ip_forward",
         "iptables-save", "conntrack -L", "brctl show"]
FILTERS = ["grep -i up", "head -20", "tail -5", "wc -l", "sort", "sort -u", "uniq -c",
           "awk '{print $1}'", "cut -d' ' -f1", "tr -s ' '", "column -t", "grep -v lo",
           "jq .", "sed -n '1,5p'"]
NOT_VIEW = ["cat /etc/hosts", "ls /etc", "uptime", "date", "df -h", "ps aux"]


def net_view():
    v = pick(VIEWS)
    k = rng.randrange(4)
    if k == 0:
        return {"cls": "read_only", "net": True}, v
    if k == 1:
        return {"cls": "read_only", "net": True}, v + " | " + pick(FILTERS) + \
            pick(["", " | " + pick(FILTERS)])
    if k == 2:
        return {"cls": "read_only", "net": True}, v + "; " + pick(VIEWS)
    return {"net": False}, pick([v + "; " + pick(NOT_VIEW), pick(NOT_VIEW) + " && " + v,
                                 v + " | tee /tmp/out",
                                 "bash -c " + shlex.quote(v), v + " | xargs echo",
                                 "chroot / " + v, "nsenter -t 1 -n " + v])


# ---- secret material through indirection ---------------------------------------------------
SECRET = ["/etc/shadow", "/etc/gshadow", "/var/backups/shadow.bak", "/etc/ssh/ssh_host_ed25519_key",
          "/etc/pve/priv/authkey.key", "/etc/pve/priv/token.cfg", "/root/.ssh/id_ed25519",
          "/root/.ssh/authorized_keys", "/home/ops/.ssh/id_rsa", "/root/.pgpass",
          "/home/ops/.pgpass", "/var/lib/pve-cluster/config.db", "/etc/corosync/authkey",
          "/etc/ceph/ceph.client.admin.keyring", "/root/.aws/credentials", "/root/.kube/config",
          "/root/.git-credentials", "/etc/postfix/sasl_passwd", "/etc/ppp/chap-secrets",
          "/etc/ipsec.secrets", "/etc/wireguard/wg0.conf", "/etc/mysql/debian.cnf",
          "/root/.my.cnf", "/etc/krb5.keytab", "/etc/exim4/passwd.client", "/root/.bash_history"]
CLEAN = ["/etc/hosts", "/etc/os-release", "/var/log/syslog", "/etc/nginx/nginx.conf",
         "/proc/meminfo", "/etc/pve/storage.cfg", "/tmp/report.txt"]
READERS = ["cat", "head -n 5", "tail -n 3", "less", "grep -i pass", "awk '{print}'",
           "sed -n p", "strings", "xxd", "base64", "od -c", "wc -c", "sort", "md5sum", "nl"]


def split_path(p):
    d, _, b = p.rpartition("/")
    return d or "/", b


def indirect(path):
    """Ways the command itself spells path (bash(1): parameters, loops, arrays,
    read, here-documents, printf -v, tilde, /proc/PID/root)."""
    r = pick(READERS)
    d, b = split_path(path)
    forms = [
        "f=%s; %s $f" % (path, r), "f=%s; %s \"$f\"" % (path, r), "f=%s; %s \"${f}\"" % (path, r),
        "d=%s; %s \"$d/%s\"" % (d, r, b), "d=%s; b=%s; %s \"${d}/${b}\"" % (d, b, r),
        "for f in /tmp/none %s; do %s \"$f\"; done" % (path, r),
        "for f in %s; do %s $f; done" % (path, r),
        "a=(/tmp/none %s); %s \"${a[1]}\"" % (path, r), "a=(%s); %s \"${a[@]}\"" % (path, r),
        "%s \"${F:-%s}\"" % (r, path), "%s ${F-%s}" % (r, path),
        "read -r f <<< %s; %s \"$f\"" % (path, r), "read f <<EOF\n%s\nEOF\n%s $f" % (path, r),
        "mapfile -t l <<< %s; %s \"${l[0]}\"" % (path, r),
        "printf -v f %%s %s; %s \"$f\"" % (path, r),
        "%s /proc/self/root%s" % (r, path), "%s /proc/1/root%s" % (r, path),
        "cd %s && %s %s" % (d, r, b), "cd / && %s %s" % (r, path.lstrip("/")),
        "%s $(echo %s)" % (r, path), "%s < %s" % (r, path), "x=$(cat %s)" % path,
        "cat %s | base64" % path, "cp %s /tmp/k" % path, "dd if=%s bs=4k count=1" % path,
        "tar -cf /tmp/k.tar %s" % path, "xargs cat <<< %s" % path,
        "while read -r l; do echo \"$l\"; done < %s" % path,
    ]
    if path.startswith("/root/"):
        forms += ["%s ~/%s" % (r, path[6:]), "%s $HOME/%s" % (r, path[6:]),
                  "%s \"${HOME}/%s\"" % (r, path[6:])]
    return pick(forms)


TREES = ["/etc", "/etc/pve", "/etc/pve/priv", "/root", "/home", "/var/lib/pve-cluster",
         "/etc/ssh", "/var/backups", "/", "/root/.ssh", "/etc/ceph"]


def tree_read(d):
    return pick(["grep -r pass %s" % d, "grep -R key %s" % d, "grep -rn secret %s" % d,
                 "grep --recursive x %s" % d, "grep -d recurse x %s" % d, "rg token %s" % d,
                 "ag password %s" % d, "cd %s && grep -r x" % d, "cd %s && rg x" % d,
                 "tar -czf /tmp/b.tgz %s" % d, "tar czf /tmp/b.tgz %s" % d,
                 "tar -cf - -C %s . | tar -tf -" % d, "cp -r %s /tmp/copy" % d,
                 "cp -a %s /tmp/copy" % d, "rsync -a %s/ /tmp/copy/" % d,
                 "zip -r /tmp/b.zip %s" % d, "7z a /tmp/b.7z %s" % d,
                 "find %s -type f -exec cat {} +" % d, "find %s -name '*' -exec grep -l x {} \\;" % d,
                 "diff -r %s /tmp/other" % d])


def secrets():
    k = rng.randrange(10)
    if k < 4:
        return {"min": 2, "reason": "reads secret material"}, indirect(pick(SECRET))
    if k == 4:
        return {"min": 2, "reason": "reads secret material"}, tree_read(pick(TREES))
    if k == 5:
        return {"min": 2, "reason": "reads secret material"}, pick([
            "cat \"$1\"", "head -c 100 $(ls /etc | head -1)", "ls | xargs cat",
            "find /etc -name '*.conf' | xargs grep -l x", "cat /proc/1/cwd/x",
            "cat /proc/$$/fd/3", "cat /proc/1/map_files/x", "cat < \"$(cat /tmp/list)\"",
            "cat ~ops/.pgpass", "tac \"$LOG\"", "cat /var/log/$f",
            "awk '{ getline l < f; print l }' f=x /tmp/x"])
    if k == 6:
        disk = pick(["/dev/sda", "/dev/sda1", "/dev/nvme0n1", "/dev/vda", "/dev/mapper/pve-root",
                     "/dev/pve/vm-100-disk-0", "/dev/zd16", "/dev/dm-3", "/dev/md0",
                     "/dev/disk/by-id/ata-X", "/dev/rbd0", "/dev/loop0", "/dev/mem", "/dev/kmem",
                     "/dev/port", "/proc/kcore", "/proc/1/mem"])
        return {"min": 2, "reason": "reads secret material"}, pick([
            "dd if=%s bs=1M count=1 | strings" % disk, "head -c 4096 %s | xxd" % disk,
            "strings %s | grep -i pass" % disk, "cat %s > /dev/null" % disk,
            "xxd -l 512 %s" % disk, "od -A x -t x1z -N 512 %s" % disk])
    if k == 7:
        return {"min": 2, "reason": "reads secret material"}, pick([
            "psql -c 'select rolname, rolpassword from pg_authid'",
            "psql -Atc \"SELECT passwd FROM pg_shadow\"", "psql -c 'table pg_user_mappings'",
            "psql -c \"select pg_read_file('/etc/hostname')\"",
            "psql -c \"select pg_read_binary_file('/etc/passwd')\"",
            "mysql -e 'select user, authentication_string from mysql.user'",
            "mysql -e 'SELECT * FROM mysql.global_priv'",
            "mysql -e \"select load_file('/etc/hosts')\"",
            "sqlite3 /var/lib/pve-cluster/config.db 'select * from tree'",
            "sqlite3 /tmp/x.db \"attach '/var/lib/pve-cluster/config.db' as c; select 1\"",
            "sqlite3 /tmp/x.db \"select readfile('/etc/hostname')\"",
            "redis-cli CONFIG GET requirepass", "redis-cli config get '*'", "redis-cli ACL LIST",
            "redis-cli acl getuser default", "pg_dumpall", "pg_dumpall --globals-only",
            "mysqldump --all-databases", "mysqldump mysql user"])
    if k == 8:
        return {"min": 2, "reason": "reads secret material"}, pick([
            "cat /etc/pve/priv/*", "cat /etc/pve/*/*", "head /etc/ssh/*key",
            "cat /root/.ssh/*", "grep x /home/*/.pgpass", "cat /etc/sha*",
            "tail /var/backups/*shadow*", "cat /etc/pve/nodes/*/pve-ssl.key"])
    return {"min": 2, "reason": "reads secret material"}, indirect(pick(SECRET))


def secrets_clean():
    """The same shapes over files that hold no secret.  Left out: what is
    conservative by design (a value the environment may set, ${F:-...}; a
    substitution that may print an option, $(echo ...)) and readers whose
    rules a computed word may turn into a write or a command (sort -o,
    sed -i, xxd's output file, less +!cmd)."""
    p = pick(CLEAN)
    cmd = indirect(p)
    while any(x in cmd for x in ("/proc/1/root", "cp ", "tar ", "dd if", "x=$(cat", "${F",
                                 "$(echo", "sort", "sed -n p", "less", "xxd")):
        cmd = indirect(p)
    return {"cls": "read_only"}, cmd


# ---- the root tier ---------------------------------------------------------------------------
ROOTPROGS = ["qm list", "qm config 100", "qm status 100", "pct list", "pct config 101",
             "pvesh get /nodes", "pvesh get /cluster/resources --type vm", "zpool status",
             "zpool list", "zfs list -t snapshot", "iptables -L -n", "nft list ruleset",
             "dmidecode -t system", "pvecm status", "ha-manager status", "pvesm status",
             "dmesg", "journalctl -n 20"]
STDIN_FILTERS = ["grep -i running", "grep -c x", "head -5", "tail -n 2", "sort", "sort -k2",
                 "uniq", "wc -l", "awk '{print $2}'", "cut -c1-20", "tr a-z A-Z",
                 "column -t", "sed -n 2p", "cat", "grep -v -i stopped"]
NOT_FILTERS = ["grep x /etc/passwd", "grep -f /root/pat", "grep -r x", "sort -o /tmp/s",
               "tee /tmp/out", "xargs echo", "cat /etc/hosts -", "awk '{getline l < \"/root/x\"; print l}'",
               "sed 'r /root/x'", "sh", "python3 -c 'import sys'", "less"]


def root_tier():
    r = pick(ROOTPROGS)
    k = rng.randrange(6)
    if k == 0:
        return {"root": True}, r
    if k in (1, 2):
        return {"root": True}, r + " | " + pick(STDIN_FILTERS) + \
            pick(["", " | " + pick(STDIN_FILTERS)]) + pick(["", " 2>/dev/null", " 2>&1"])
    if k == 3:
        return {"root": True}, pick(["sudo ", "timeout 30 ", "nice -n 5 "]) + r
    return {"root": False}, pick([
        r + " | " + pick(NOT_FILTERS), r + " > /tmp/out", r + " < /etc/hosts",
        r + "; " + pick(ROOTPROGS), r + " && echo ok", "echo $(%s)" % r, "x=$(%s)" % r,
        "bash -c " + shlex.quote(r), "chroot / " + r, "LC_ALL=C " + r,
        pick(STDIN_FILTERS) + " | " + r, "ls | " + r, "cat /etc/hosts", "uptime",
        "for i in 1; do %s; done" % r, "{ %s; }" % r, "(%s)" % r, "f() { %s; }; f" % r])


# ---- the write set ------------------------------------------------------------------------------
def write_set():
    # directories the policy lets a guest change (scratch, logs, paths no
    # path rule names); a cd keeps the directory before it possible, so a
    # relative path after one is in both
    d = pick(["/tmp", "/var/tmp", "/var/log/app", "/data/x", "/var/www/html"])
    n = "f%d" % rng.randrange(100)
    forms = [
        ("touch %s/%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("touch %s/a %s/b" % (d, d), ["%s/a" % d, "%s/b" % d], None),
        ("mkdir -p %s/%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("echo x > %s/%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("printf 'x\\n' >> %s/%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("date | tee %s/%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("cp /etc/hosts %s/%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("sed -i s/a/b/ %s/%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("sort -o %s/%s /etc/hosts" % (d, n), ["%s/%s" % (d, n)], None),
        ("cd %s && touch %s" % (d, n), ["%s/%s" % (d, n), "/root/" + n], None),
        ("cd %s; echo x > ./%s" % (d, n), ["%s/%s" % (d, n), "/root/" + n], None),
        ("ls > %s//x/../%s" % (d, n), ["%s/%s" % (d, n)], None),
        ("tar -xf /tmp/in.tar -C %s" % d, [d, d + "/"], None),
        ("zip %s/%s.zip /etc/hosts" % (d, n), ["%s/%s.zip" % (d, n)], None),
        ("systemctl restart nginx", [], "guest-service-state"),
        ("systemctl reload nginx && systemctl status nginx", [], "guest-service-state"),
        ("service nginx restart", [], "guest-service-script"),
        ("kill -HUP 4242", [], "guest-kill"), ("pkill -USR1 nginx", [], "guest-kill"),
        ("journalctl --rotate", [], "journal-maintenance"),
        ("renice -n 5 -p 4242", [], "priority-set"),
        ("logger -t probe hello", [], "logging"),
        ("cpio -i --no-absolute-filenames -D %s < /tmp/a.cpio" % d, [d, d + "/"], None),
        ("unrar x /tmp/a.rar %s/" % d, [d + "/"], None),
    ]
    cmd, paths, action = pick(forms)
    return {"cls": "reversible_low", "writes": paths, "action": action,
            "unknown": False}, cmd


def unconfinable():
    return {"min": 2}, pick([
        "touch \"$F\"", "echo x > $OUT", "cd \"$D\" && touch x", "tar -xPf /tmp/x.tar",
        "git commit -am x", "git branch b", "cpio -idm < /tmp/x.cpio", "apt-get clean",
        "systemctl restart nginx; kill 4242", "echo hi | at now + 1 minute",
        "systemctl clean nginx", "vzdump 100", "zfs send rpool/data@s",
        "cp /etc/hosts \"$(mktemp -d)\"/x"])


FAMILIES = [("network-send", network_send), ("network-read", network_read),
            ("net-view", net_view), ("secrets", secrets), ("secrets", secrets),
            ("secrets-clean", secrets_clean), ("root-tier", root_tier),
            ("write-set", write_set), ("unconfinable", unconfinable)]
RANK = {"read_only": 0, "reversible_low": 1, "config_mutation": 2, "destructive": 3}


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def classify(lines, gate):
    args = [BIN, "classify", "--batch", "--json", "--policy", POLICY]
    if gate:
        args += ["--gate", GATE]
    out = subprocess.run(args, input="".join(lines), capture_output=True, text=True, check=True)
    return [json.loads(l) for l in out.stdout.splitlines()]


cases = []
for _ in range(COUNT):
    name, fam = pick(FAMILIES)
    want, cmd = fam()
    if name in ("write-set",):
        target = "vm"
    elif name == "root-tier":
        target = "proxmox-host"
    else:
        target = pick(["proxmox-host", "vm", "lxc"])
    cases.append((name, target, cmd, want))
lines = ["%s\t%s\n" % (t, esc(c)) for _, t, c, _ in cases]
gated = classify(lines, True)
ungated = classify(lines, False)
bad = 0
count = {}
for (name, target, cmd, want), got, raw in zip(cases, gated, ungated):
    count[name] = count.get(name, 0) + 1
    why = []
    if "min" in want and RANK[got["class"]] < want["min"]:
        why.append("class %s below config_mutation" % got["class"])
    if "cls" in want and got["class"] != want["cls"]:
        why.append("class %s, not %s" % (got["class"], want["cls"]))
    if "reason" in want and want["reason"] not in got["reasons"]:
        why.append("no `%s` reason" % want["reason"])
    if "net" in want and got["net_view"] != want["net"]:
        why.append("net_view %s" % got["net_view"])
    if "root" in want and got["needs_root"] != want["root"]:
        why.append("needs_root %s" % got["needs_root"])
    if "writes" in want and sorted(got["writes"]) != sorted(want["writes"]):
        why.append("writes %s, not %s" % (got["writes"], want["writes"]))
    if "action" in want and got["action_rule"] != want["action"]:
        why.append("action_rule %s, not %s" % (got["action_rule"], want["action"]))
    if "unknown" in want and got["writes_unknown"] != want["unknown"]:
        why.append("writes_unknown %s" % got["writes_unknown"])
    if "ungated_min" in want and RANK[raw["class"]] < want["ungated_min"]:
        why.append("without the gate's allow list still %s" % raw["class"])
    if why:
        bad += 1
        if bad <= 25:
            print("  %s on %s: %s\n    %s\n    %s" % (name, target, "; ".join(why), cmd,
                                                   got["reasons"][:400]))
print("containment: %s" % " ".join("%s=%d" % (k, count[k]) for k in sorted(count)))
if bad:
    print("containment: %d of %d wrong" % (bad, len(cases)))
    sys.exit(1)
print("containment: %d commands ok" % len(cases))
