#!/bin/bash
# The classifier through `airlock classify`: the corpus in tests/data/classifier*.tsv
# (expected<TAB>target_type<TAB>command; expected is a class or >=class), the
# CLI's single-command and --json forms, batch error lines, and hostile input
# (1 MiB command, 10,000 nested $( , invalid UTF-8, unterminated everything),
# which must get at least config_mutation, quickly, without a crash.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=build/bin/airlock
policy=seeds/policy.yaml
[ -x "$bin" ] || { echo "classifier: $bin not built"; exit 1; }
tmp=$(mktemp -d /tmp/airlock-classifier.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
rank() {
	case "$1" in
	read_only) echo 0 ;; reversible_low) echo 1 ;; config_mutation) echo 2 ;;
	destructive) echo 3 ;; *) echo -1 ;;
	esac
}

# --- corpus -----------------------------------------------------------------------
for corpus in tests/data/classifier*.tsv; do
	grep -v -e '^#' -e '^$' "$corpus" >"$tmp/lines"
	cut -f2- "$tmp/lines" >"$tmp/in"
	if ! "$bin" classify --batch --policy "$policy" <"$tmp/in" >"$tmp/out"; then
		echo "classifier: batch over $corpus failed"
		fail=1
		continue
	fi
	n_in=$(wc -l <"$tmp/in")
	n_out=$(wc -l <"$tmp/out")
	if [ "$n_in" != "$n_out" ]; then
		echo "classifier: $corpus: $n_in lines in, $n_out out"
		fail=1
		continue
	fi
	bad=$(paste "$tmp/lines" "$tmp/out" | awk -F'\t' '
		function rank(c) { return c == "read_only" ? 0 : c == "reversible_low" ? 1 : \
			c == "config_mutation" ? 2 : c == "destructive" ? 3 : -1 }
		{
			want = $1; got = $4; atleast = 0
			if (substr(want, 1, 2) == ">=") { atleast = 1; want = substr(want, 3) }
			ok = atleast ? rank(got) >= rank(want) : got == want
			if (rank(want) < 0) ok = 0
			if (!ok) printf "  line %d: expected %s%s got %s on %s: %s\n    %s\n", NR, \
				atleast ? ">=" : "", want, got, $2, $3, substr($5, 1, 300)
		}')
	total=$(wc -l <"$tmp/lines")
	if [ -n "$bad" ]; then
		echo "classifier: $corpus: mismatches:"
		echo "$bad"
		echo "classifier: $corpus: $(echo "$bad" | grep -c '^  line') of $total lines wrong"
		fail=1
	else
		echo "classifier: $corpus: $total lines ok"
	fi
done

# --- harmless network reads of hosts the gate allows (tests/data/allowed.tsv, with
# tests/data/gate-network.yaml): as expected there, and none read_only without it ------
grep -v -e '^#' -e '^$' tests/data/allowed.tsv >"$tmp/allowed"
cut -f2- "$tmp/allowed" | "$bin" classify --batch --policy "$policy" \
	--gate tests/data/gate-network.yaml >"$tmp/allowed.out"
cut -f2- "$tmp/allowed" | "$bin" classify --batch --policy "$policy" >"$tmp/allowed.nogate"
bad=$(paste "$tmp/allowed" "$tmp/allowed.out" "$tmp/allowed.nogate" | awk -F'\t' '
	$1 != $4 { printf "  line %d: expected %s got %s with the gate: %s\n", NR, $1, $4, $3 }
	$6 == "read_only" { printf "  line %d: read_only without the gate: %s\n", NR, $3 }')
if [ -n "$bad" ]; then
	echo "classifier: tests/data/allowed.tsv:"
	echo "$bad"
	fail=1
else
	echo "classifier: tests/data/allowed.tsv: $(wc -l <"$tmp/allowed") lines ok (and none read_only without the gate)"
fi

# --- generated evasions: random compositions of wrappers, quoting, shells given
# strings, here-docs, pipes to shells, substitutions, functions and groups around
# a mutation; each must keep at least the mutation's class (fixed seeds) -------------
python3 - 3 3000 >"$tmp/gen" <<'PY'
import random, re, shlex, sys
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
payloads = [("apt-get install -y nfs-kernel-server", 2), ("reboot", 3), ("rm -rf /var/lib/vz", 3),
            ("dpkg -i /tmp/x.deb", 2), ("modprobe nfsd", 2), ("systemctl enable nfs-server", 2),
            ("apt install x", 2), ("update-initramfs -u", 2), ("shutdown -h now", 3),
            ("zfs destroy rpool/data", 3), ("qm destroy 100", 3), ("sysctl -w a.b=1", 2),
            ("echo b > /proc/sysrq-trigger", 3), ("dd if=/dev/zero of=/dev/sda", 3),
            ("echo x > /etc/exports", 2), ("mkfs.ext4 /dev/sdb", 3)]
def quote_first(p):
    f, _, rest = p.partition(" ")
    k = random.randrange(5)
    if k == 0: f = f[:2] + "''" + f[2:]
    elif k == 1: f = '"' + f + '"'
    elif k == 2: f = "\\" + f
    elif k == 3: f = f[0] + "\\" + f[1:]
    else: f = "$'" + "".join("\\x%02x" % ord(c) for c in f) + "'"
    return f + (" " + rest if rest else "")
wrappers = ["sudo", "sudo -u root", "sudo -E", "env X=1", "env -i", "nice -n 5", "timeout 60",
            "nohup", "command", "time", "ionice -c3", "stdbuf -oL", "setsid", "chroot /",
            "flock /tmp/l", "systemd-run", "/usr/bin/env", "DEBIAN_FRONTEND=noninteractive",
            "exec", "builtin command", "sudo -n --", "doas", "taskset -c 0", "chrt -o 0"]
n_doc = [0]
def doc():
    n_doc[0] += 1
    return "EOF%d" % n_doc[0]
def simple(p):  # starts with a plain command word (a wrapper may go in front)
    return re.match(r"^[A-Za-z$'\"\\/]", p) is not None and not re.match(r"^(if|for|while|f\(\)|x=)", p)
def t(p):
    k = random.randrange(21)
    if k == 0 and simple(p): return random.choice(wrappers) + " " + p
    if k == 1: return "bash -c " + shlex.quote(p)
    if k == 2: return "sh -c " + shlex.quote(p)
    if k == 3: return "su -c " + shlex.quote(p)
    if k == 4: return "eval " + shlex.quote(p)
    if k == 5: return random.choice(["ls && ", "uptime; ", "true || ", "ls | ", "pveversion\n", "ls & "]) + p
    if k == 6: return p + "\n" + random.choice(["ls", "echo ok", "true"])
    if k == 7: d = doc(); return "bash <<'" + d + "'\n" + p + "\n" + d
    if k == 8: return "echo " + shlex.quote(p) + " | " + random.choice(["sh", "bash", "sudo sh", "bash -s"])
    if k == 9: return "echo $(\n" + p + "\n)"
    if k == 10: return "f(){\n" + p + "\n}\nf"
    if k == 11: return "{\n" + p + "\n}"
    if k == 12: return "(\n" + p + "\n)"
    if k == 14 and "\n" not in p: return p.replace(" ", " \\\n", 1)
    if k == 15: return "if true; then\n" + p + "\nfi"
    if k == 16: return "ssh node2 " + shlex.quote(p)
    if k == 17: return "for i in 1; do\n" + p + "\ndone"
    if k == 18: return "x=$(\n" + p + "\n)"
    if k == 19: d = doc(); return "cat <<'" + d + "' | sh\n" + p + "\n" + d
    if k == 20: return "bash <<< " + shlex.quote(p)
    return "watch -n 60 " + shlex.quote(p)
for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3000):
    p, cls = random.choice(payloads)
    if random.randrange(3) == 0:
        p = quote_first(p)
    for _ in range(random.randint(1, 4)):
        p = t(p)
    print("%d\tproxmox-host\t%s" % (cls, p.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")))
PY
cut -f2- "$tmp/gen" | "$bin" classify --batch --policy "$policy" >"$tmp/gen.out"
under=$(paste "$tmp/gen" "$tmp/gen.out" | awk -F'\t' '
	BEGIN { r["read_only"] = 0; r["reversible_low"] = 1; r["config_mutation"] = 2; r["destructive"] = 3 }
	!($4 in r) || r[$4] < $1 { n++; if (n <= 10) print "  want " $1 " got " $4 ": " $3 }
	END { if (n) print n " under-classified" }')
if [ -n "$under" ]; then
	echo "classifier: generated evasions:"
	echo "$under"
	fail=1
else
	echo "classifier: $(wc -l <"$tmp/gen") generated evasions ok"
fi

# --- generated observations: plain reads composed with pipes, sudo, timeouts,
# loops, substitutions, bash -c, pct exec / qm guest exec; all must stay read_only --
python3 - 5 2000 >"$tmp/obs" <<'PY'
import random, shlex, sys
random.seed(int(sys.argv[1]))
obs = """cat /etc/hosts|ls -la /etc/pve|grep -i error /var/log/syslog|journalctl -u pveproxy -n 50 --no-pager|systemctl status pveproxy|dpkg -l|apt list --installed|apt-cache policy nfs-common|ip a|ip route|df -h|du -sh /var/lib/vz|qm list|pct list|qm config 100|pct config 101|zpool status|zfs list|pveversion -v|uptime|free -m|lsblk|blkid|ps aux|top -bn1|ss -tlnp|cat /proc/meminfo|uname -a|hostname -f|date|timedatectl|lscpu|lspci|dmesg -T|tail -n 50 /var/log/syslog|head -5 /etc/passwd|wc -l /etc/passwd|stat /etc/pve|find /etc -name '*.conf'|find /var/log -mtime -1 -type f|awk '{print $1}' /etc/hosts|sed -n '1,5p' /etc/hosts|sort /etc/passwd|uniq -c /tmp/x|cut -d: -f1 /etc/passwd|ceph -s|pvesm status|pvecm status|ha-manager status|pvesh get /nodes|zpool iostat|smartctl -a /dev/sda|sensors|lsmod|modinfo zfs|sysctl -a|systemctl list-units --failed|systemctl is-active pveproxy|cat /etc/network/interfaces|brctl show|iptables -L -n|nft list ruleset|mount|findmnt|cat /proc/mdstat|lvs|vgs|pvs|last -n 5|who|id|whoami|env|printenv PATH|echo hello|which qm|command -v pct|type ls|file /usr/bin/qm|md5sum /etc/hosts|jq . /tmp/x.json|curl -s http://localhost:8006|ping -c 1 10.0.0.1|dig +short example.com|openssl x509 -in /etc/pve/local/pve-ssl.pem -noout -dates|crontab -l|getent passwd|nproc|arch|cat /etc/os-release|systemctl show pveproxy -p ActiveState|journalctl -b -p err|zfs get compressratio|qm guest cmd 100 get-osinfo|pvenode task list|efibootmgr -v|proxmox-boot-tool status|docker ps|git status""".split("|")
import re
def simple(p):
    return re.match(r"^[a-z/]", p) is not None and not re.match(r"^(if|for|while|\{)\b", p)
def t(p):
    k = random.randrange(16)
    if k in (0, 4, 8, 9, 12, 14) and not simple(p):
        k = 1
    if k == 0: return "sudo " + p
    if k == 1: return p + " | " + random.choice(["grep x", "head", "tail -5", "wc -l", "sort", "less", "column -t", "awk '{print $1}'"])
    if k == 2: return p + " 2>/dev/null"
    if k == 3: return p + " || true"
    if k == 4: return "timeout 10 " + p
    if k == 5: return "echo \"$(" + p + ")\""
    if k == 6: return "if true; then\n" + p + "\nfi"
    if k == 7: return "bash -c " + shlex.quote(p)
    if k == 8: return "pct exec 101 -- " + p
    if k == 9: return "qm guest exec 100 -- " + p
    if k == 10: return "for i in 1 2; do " + p + "; done"
    if k == 11: return p + " && echo ok"
    if k == 12: return "nice -n 19 " + p
    if k == 13: return "watch -n 5 " + shlex.quote(p)
    if k == 14: return "LANG=C " + p
    return "{ " + p + "; }"
for i in range(int(sys.argv[2])):
    p = random.choice(obs)
    for _ in range(random.randint(0, 3)):
        p = t(p)
    print("proxmox-host\t" + p.replace("\\", "\\\\").replace("\n", "\\n"))
PY
# (their network reads go to hosts tests/data/gate-network.yaml allows)
"$bin" classify --batch --policy "$policy" --gate tests/data/gate-network.yaml <"$tmp/obs" >"$tmp/obs.out"
over=$(paste "$tmp/obs" "$tmp/obs.out" | awk -F'\t' '$3 != "read_only" { n++; if (n <= 10) print "  got " $3 ": " $2 } END { if (n) print n " over-flagged" }')
if [ -n "$over" ]; then
	echo "classifier: generated observations:"
	echo "$over"
	fail=1
else
	echo "classifier: $(wc -l <"$tmp/obs") generated observations stay read_only"
fi

# --- adversarial families of "read-only by proof" (tests/data/adversarial.py):
# options with values, abbreviations, tools running several commands, environment,
# builtins that evaluate, disks/firmware/boot/cluster, secret material -- each at
# or above its class -- and observations spelled many ways, all read_only ----------
python3 tests/data/adversarial.py 11 4000 >"$tmp/adv"
cut -f3- "$tmp/adv" | "$bin" classify --batch --policy "$policy" --gate tests/data/gate-network.yaml >"$tmp/adv.out"
adv=$(paste "$tmp/adv" "$tmp/adv.out" | awk -F'\t' '
	BEGIN { r["read_only"] = 0; r["reversible_low"] = 1; r["config_mutation"] = 2; r["destructive"] = 3 }
	{
		n[$2]++
		if (!($5 in r) || ($1 == 0 && $5 != "read_only") || ($1 > 0 && r[$5] < $1)) {
			bad++; if (bad <= 15) printf "  %s: want %s got %s: %s\n", $2, $1 ? ">=" $1 : "read_only", $5, $4
		}
	}
	END {
		for (k in n) fam = fam sprintf(" %s=%d", k, n[k])
		if (bad) printf "%d wrong\n", bad; else printf "ok:%s\n", fam
	}')
case "$adv" in
ok:*) echo "classifier: adversarial families$(echo "${adv#ok:}" | tr ' ' '\n' | sort | tr '\n' ' ')" ;;
*)
	echo "classifier: adversarial families:"
	echo "$adv"
	fail=1
	;;
esac

# --- what the classifier tells the jail (tests/data/containment.py): network
# clients that send, harmless reads of allowed destinations, the network view,
# secret material through the command's own values and trees, the root tier,
# the write set and action rules, and changes that cannot be confined ----------------
if ! python3 tests/data/containment.py 13 4000 "$bin" "$policy" tests/data/gate-network.yaml; then
	echo "classifier: containment families failed"
	fail=1
fi

# --- the CLI's single-command forms -------------------------------------------------
expect_out() { # name, expected first line, command...
	local name=$1 want=$2
	shift 2
	local got
	got=$("$@" 2>&1 | head -1)
	if [ "$got" != "$want" ]; then
		echo "classifier: $name: expected '$want', got '$got'"
		fail=1
	fi
}
expect_out "single" config_mutation \
	"$bin" classify --policy "$policy" --target-type proxmox-host -- 'uptime && sudo apt-get install -y nfs-kernel-server'
expect_out "words joined" config_mutation \
	"$bin" classify --policy "$policy" --target-type proxmox-host -- apt-get install -y x
expect_out "declared raises" destructive \
	"$bin" classify --policy "$policy" --target-type vm --declared-risk destructive -- ls
expect_out "declared never lowers" config_mutation \
	"$bin" classify --policy "$policy" --target-type proxmox-host --declared-risk read_only -- 'apt-get install -y nfs-kernel-server'
json=$("$bin" classify --policy "$policy" --target-type proxmox-host --json -- 'ls; apt-get install x')
if ! echo "$json" | grep -q '"class":"config_mutation"' ||
	! echo "$json" | grep -q '"rule":"host-packages"' ||
	! echo "$json" | grep -q '"classifier_version":"airlock-classifier/'; then
	echo "classifier: --json output lacks class, rule or version: $json"
	fail=1
fi
text=$("$bin" classify --policy "$policy" --batch <<<$'proxmox-host\tls && apt-get install -y x')
case "$text" in
"config_mutation	segment 1: ls (rule observe-text) on proxmox-host => read_only; segment 2: apt-get install (rule host-packages) on proxmox-host => config_mutation; segment 2: apt-get sends network traffic to the package mirrors (no harmless form is known for it) (rule network-send) on proxmox-host => config_mutation") ;;
*) echo "classifier: batch reason text: $text"; fail=1 ;;
esac

# --- usage and errors ----------------------------------------------------------------
expect_rc() { # name, rc, command...
	local name=$1 want=$2
	shift 2
	"$@" >/dev/null 2>&1 </dev/null
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "classifier: $name: exit $rc, expected $want"
		fail=1
	fi
}
expect_rc "no target" 2 "$bin" classify --policy "$policy" -- ls
expect_rc "bad target" 2 "$bin" classify --policy "$policy" --target-type host -- ls
expect_rc "bad declared" 2 "$bin" classify --policy "$policy" --target-type vm --declared-risk high -- ls
expect_rc "unknown option" 2 "$bin" classify --policy "$policy" --frobnicate
expect_rc "help" 0 "$bin" classify --help
expect_rc "missing policy" 1 "$bin" classify --policy "$tmp/none.yaml" --target-type vm -- ls
printf 'defaults: {}\nrules:\n  - id: x\n    programs: [ls]\n    class: safe\n' >"$tmp/bad.yaml"
err=$("$bin" classify --policy "$tmp/bad.yaml" --target-type vm -- ls 2>&1)
case "$err" in
*"bad.yaml:5:12:"*) ;;
*) echo "classifier: a malformed policy must be refused with file:line:col: $err"; fail=1 ;;
esac

# A malformed batch line gets an error line, and the batch goes on.
printf 'proxmox-host\tls\nnonsense\nbogus\tls\nvm\tls \\q\nlxc\tcat /etc/hosts\n' >"$tmp/mixed"
"$bin" classify --policy "$policy" --batch <"$tmp/mixed" | cut -f1 >"$tmp/mixed.out"
if [ "$(tr '\n' ' ' <"$tmp/mixed.out")" != "read_only error error error read_only " ]; then
	echo "classifier: malformed batch lines: $(tr '\n' ' ' <"$tmp/mixed.out")"
	fail=1
fi

# --- hostile input ----------------------------------------------------------------------
python3 - "$tmp/hostile" <<'PY'
import sys
lines = [
    "echo " + "x" * (1 << 20),                 # 1 MiB of one word
    "ls " * 350000,                            # 1 MiB of words
    "$(" * 10000,                              # 10,000 unterminated $(
    "$(echo " * 10000 + ")" * 10000,           # 10,000 nested $(
    "`" * 10001,
    "( " * 10000 + "reboot",
    "{ " * 10000,
    "bash -c \"" * 3000,
    "eval " * 5000 + "reboot",
    "sudo " * 5000 + "reboot",
    "a|" * 200000 + "reboot",
    "'unterminated",
    "\"unterminated",
    "${unterminated",
    "cat <<EOF\\nno end",
    "echo $((1+",
    "apt-get install x \\",
    "for x in; do",
    "case x in",
    "if true; then apt-get install x",
    ")",
    "x() {",
    "$'\\xff\\xfe' install x",
    "{a,b}" * 10000,                           # brace expansion past its bounds
    "{" * 10000 + "a,b" + "}" * 10000,
    "a=(" * 5000,
    # abbreviations too many to spell out in the scratch arena (ip a a = address add)
    "ip " + "a " * 500000,
    # a 1 MiB cluster of options and 170,000 long options
    "cat -" + "A" * 1000000 + " /etc/shadow",
    "ls " + "--all " * 170000 + "--reboot-argument=x",
]
with open(sys.argv[1], "w", encoding="latin-1") as f:
    for l in lines:
        l = l.replace("\\n", "\n").replace("\\", "\\\\").replace("\n", "\\n")
        f.write("proxmox-host\t" + l + "\n")
    # invalid UTF-8 bytes and control characters, raw
    f.write("proxmox-host\t\xff\xfe\x80 apt-get install \x01\x7f\n")
    # found by the fuzzer: a word known only at run time, relative to two
    # directories a cd may reach, read past its joined path (secrets)
    f.write("lxc\tcd //-Ero/id_ec\xfc/x or x$oot/" + "\x81" * 5 + "x" + "\x81" * 13 +
            "_ec\xfc/x or x$oot/" + "\x81" * 5 + "x" + "\x81" * 40 + "\xa1" + "\x81" * 36 +
            ".ss\xff9\n")
PY
start=$(date +%s%N)
if ! "$bin" classify --policy "$policy" --batch <"$tmp/hostile" >"$tmp/hostile.out"; then
	echo "classifier: hostile batch crashed or failed"
	fail=1
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
n=0
while IFS=$'\t' read -r cls _; do
	n=$((n + 1))
	if [ "$(rank "$cls")" -lt 2 ] && [ "$n" -ne 1 ] && [ "$n" -ne 2 ]; then
		echo "classifier: hostile line $n got $cls (must be >= config_mutation)"
		fail=1
	fi
done <"$tmp/hostile.out"
want=$(wc -l <"$tmp/hostile")
if [ "$n" != "$want" ]; then
	echo "classifier: hostile: $want lines in, $n out"
	fail=1
fi
echo "classifier: $n hostile inputs judged in ${ms} ms"
# The two 1 MiB lines of plain words are harmless and may be read_only; the
# pipe of 200,000 stages ends in reboot.
if [ "$(sed -n 11p "$tmp/hostile.out" | cut -f1)" != destructive ]; then
	echo "classifier: 200,000-stage pipeline ending in reboot must be destructive"
	fail=1
fi

# --- the policy from the database (what `airlock seed` ingested) --------------------------
# A policy whose grammar is malformed is refused by `airlock seed` with its
# file:line:col and nothing of it is ingested; the grammars came along with the
# policy the database holds (an unknown option is unproven there too).
mkdir -p "$tmp/badseeds"
cp seeds/*.yaml "$tmp/badseeds/"
python3 - "$tmp/badseeds/policy.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("\n  uptime:\n", "\n  uptime:\n    optoins: -p\n", 1)
open(p, "w").write(s)
PY
grep -q "optoins" "$tmp/badseeds/policy.yaml" || { echo "classifier: could not break the policy"; fail=1; }
dbout=$(scripts/pgtmp --quiet -- bash -c '
	build/bin/airlock migrate >/dev/null &&
	build/bin/airlock seed seeds/ >/dev/null &&
	build/bin/airlock classify --target-type proxmox-host -- "apt-get install -y x" &&
	printf "vm\tls\nvm\tsystemctl --reboot-argument=x status\n" | build/bin/airlock classify --batch &&
	if build/bin/airlock seed "$0" 2>&1; then echo "BAD SEED ACCEPTED"; fi &&
	echo "versions: $(psql -Atc "SELECT count(*) FROM airlock.policies")" &&
	echo "no allow: $(build/bin/airlock classify --target-type vm -- curl -s http://localhost:8006 | head -1)" &&
	mkdir -p "$0.net" && cp seeds/*.yaml "$0.net/" &&
	printf "network:\n  allow: [localhost]\n" >>"$0.net/gate.yaml" &&
	build/bin/airlock seed "$0.net" >/dev/null &&
	echo "allowed: $(build/bin/airlock classify --target-type vm -- curl -s http://localhost:8006 | head -1)" &&
	printf "network:\n  allow: [\"*\"]\n" >"$0.net/gate.yaml" &&
	if build/bin/airlock seed "$0.net" 2>&1; then echo "BAD GATE ACCEPTED"; fi' "$tmp/badseeds" 2>&1)
case "$dbout" in
*"config_mutation"*"policy database policy version 1"*"read_only	segment 1: ls"*"cannot prove read-only"*) ;;
*) echo "classifier: classify with the database policy: $dbout"; fail=1 ;;
esac
case "$dbout" in
*"no allow: config_mutation"*"allowed: read_only"*"gate.yaml:"*"would allow every host"*) ;;
*) echo "classifier: gate.yaml's network.allow from the database: $dbout"; fail=1 ;;
esac
case "$dbout" in
*"BAD GATE ACCEPTED"*) echo "classifier: a gate.yaml allowing every host was ingested: $dbout"; fail=1 ;;
esac
case "$dbout" in
*"BAD SEED ACCEPTED"*) echo "classifier: a malformed grammar was ingested: $dbout"; fail=1 ;;
*"policy.yaml:"*":5: grammar of uptime: unknown key \`optoins\`"*"versions: 1"*) ;;
*) echo "classifier: malformed grammar at seed: $dbout"; fail=1 ;;
esac
exit $fail
