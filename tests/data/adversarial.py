#!/usr/bin/env python3
"""Adversarial generator for the classifier, one family per category of
"read-only by proof": options with values, abbreviations, tools that run
several commands, writes through options and environment, builtins that
evaluate, disks/firmware/boot/cluster, secret material.  And realistic
observations spelled many ways, which must stay read_only.

Usage: adversarial.py SEED COUNT
Prints `rank<TAB>category<TAB>target<TAB>command` lines (batch escapes in the
command): rank 0 means "must be read_only", 2 "at least config_mutation",
3 "at least destructive".  The lists here are written from the programs'
manuals, independently of seeds/policy.yaml, so that they test the policy
rather than restate it.  Their network reads go to hosts that
tests/data/gate-network.yaml allows (the suite passes it with --gate).
"""
import random
import shlex
import sys

SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 1
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
rng = random.Random(SEED)
pick = rng.choice

SYSTEM_FILES = ["/etc/cron.d/job", "/etc/apt/sources.list.d/x.list", "/root/.bashrc",
                "~/.bashrc", "~/.profile", "~/.ssh/rc", "~/.ssh/authorized_keys",
                "/root/.ssh/config", "/usr/lib/x.so", "/usr/local/bin/x", "/var/lib/dpkg/status",
                "/boot/grub/grub.cfg", "/lib/systemd/system/x.service", "/etc/pve/qemu-server/100.conf",
                "/etc/./passwd", "/etc//sudoers", "/tmp/../etc/hosts", "~root/.profile",
                "/etc/profile.d/x.sh", "/root/.bash_profile", "~/.bash_logout"]
BLOCK_DEVICES = ["/dev/sda", "/dev/nvme0n1", "/dev/vda", "/dev/sdb1", "/dev/mapper/pve-root",
                 "/dev/md0", "/dev/dm-0"]
URL = ["http://10.0.0.5/x", "https://example.com/a.sh", "http://localhost:8006/api2/json"]
WRAP = ["", "", "", "sudo ", "timeout 30 ", "nice -n 5 ", "sudo -u root ", "stdbuf -oL "]
TAIL = ["", "", "", " | head", " | grep -v x", " 2>/dev/null", " | tail -5", " && echo ok"]


def wrap(cmd):
    w = pick(WRAP) if " && " not in cmd and not cmd.startswith("cd ") else ""
    if rng.randrange(6) == 0:
        return "bash -c " + shlex.quote(cmd) + pick(TAIL)
    return w + cmd + pick(TAIL)


def cluster(flags, opt):
    """-sS + o -> -sSo: a value option last in a cluster of flags."""
    return "-" + "".join(rng.sample(flags, rng.randint(1, len(flags)))) + opt[1:]


def long_abbrev(opt, others):
    """A prefix of --opt that names no other option (getopt_long accepts it)."""
    name = opt[2:]
    for n in range(1, len(name) + 1):
        p = "--" + name[:n]
        if not any(o != opt and o.startswith(p) for o in others) and n >= len(name) // 2:
            return p
    return opt


def value_forms(opt, val, long_opts=None, short_flags=None):
    forms = []
    if opt.startswith("--"):
        forms += [opt + "=" + val, opt + " " + val]
        if long_opts:
            a = long_abbrev(opt, long_opts)
            forms += [a + "=" + val, a + " " + val]
    else:
        forms += [opt + " " + val, opt + val]
        if short_flags:
            forms.append(cluster(short_flags, opt) + " " + val)
    return forms


# ---- 1. options with values that write (writes through options) ----------------
CURL_WRITE = ["-o", "--output", "-D", "--dump-header", "--stderr", "--trace", "--trace-ascii",
              "--libcurl", "--etag-save", "-c", "--cookie-jar"]
WGET_WRITE = ["-O", "--output-document", "-o", "--output-file", "-a", "--append-output"]
WGET_LONG = ["--output-document", "--output-file", "--append-output", "--output-dir"]
JOURNAL_LONG = ["--cursor-file", "--cursor", "--after-cursor", "--show-cursor"]


def options_with_values():
    target = pick(SYSTEM_FILES)
    k = rng.randrange(16)
    if k == 0:
        o = pick(CURL_WRITE)
        f = pick(value_forms(o, target, None, list("sSfLk") if len(o) == 2 else None))
        return 2, "curl " + f + " " + pick(URL)
    if k == 1:
        o = pick(WGET_WRITE)
        f = pick(value_forms(o, target, WGET_LONG, list("qc") if len(o) == 2 else None))
        return 2, "wget " + f + " " + pick(URL)
    if k == 2:
        return 3, "curl -sSo " + pick(BLOCK_DEVICES) + " " + pick(URL)
    if k == 3:
        return 2, "journalctl -u x " + pick(value_forms("--cursor-file", target, JOURNAL_LONG))
    if k == 4:
        return 2, pick(["sort -o ", "sort --output="]) + target + " /tmp/x"
    if k == 5:
        return 2, pick(["tar -cf ", "tar --file=", "tar -czf "]) + target + " /tmp/x"
    if k == 6:
        return 3, pick(["tar -cf ", "tar --file=", "tar -cvf "]) + pick(BLOCK_DEVICES) + " /etc"
    if k == 7:
        return 2, pick(["openssl rand -out ", "openssl rand -writerand "]) + target + " 16"
    if k == 8:
        return 2, pick(["gawk --profile=", "gawk -o", "gawk --dump-variables=", "awk -p"]) + \
            target + " '{print}' /tmp/x"
    if k == 9:
        return 2, "find /var/log -name '*.log' " + pick(["-fprint ", "-fprint0 ", "-fls "]) + target
    if k == 10:
        return 2, pick(["sar -o {} 1 1", "sshd -t -E {}", "flock {} true"]).format(target)
    if k == 13:
        d = pick(["/etc/cron.d", "/etc", "/usr/local/bin", "/root/.ssh", "/boot"])
        return 2, pick(["cp", "mv", "ln -s", "install", "cp -a"]) + " " + pick([
            "-t %s /tmp/x", "-t%s /tmp/x", "--target-directory=%s /tmp/x",
            "--target-d=%s /tmp/x", "--target-dir %s /tmp/x", "-vt %s /tmp/x",
            "-vt%s /tmp/x"]) % d
    if k == 12:
        d = pick(["/etc", "/etc/cron.d", "/root/.ssh", "/usr/local/bin", "/etc/profile.d"])
        return 2, "cd %s && %s" % (d, pick([
            "wget http://10.0.0.5/x", "wget -q https://example.com/a.sh", "wget -r http://x/",
            "curl -O http://10.0.0.5/x", "curl -sSLO https://example.com/a.sh",
            "curl -J -O http://x/y", "wget --content-disposition http://x/y"]))
    if k == 11:
        return 2, pick(["yq -i '.a=1' ", "sed -i s/a/b/ ", "sed --in-place= s/a/b/ ",
                        "psql -c 'select 1' -o ", "psql -c 'select 1' -L ",
                        "mysql -e 'select 1' --tee="]) + target
    # options that run a program or name a configuration that can
    prog = pick(["/tmp/x", "'sh -c reboot'", "/usr/local/bin/helper"])
    return 2, pick([
        "man -P %s ls", "man --pager=%s ls", "man -C %s ls", "rg --pre %s foo /etc",
        "coredumpctl --debugger=%s debug", "dpkg-architecture -c %s",
        "pidstat -e %s", "systemd-run -p ExecStartPre=%s true",
        "mysql --pager=%s -e 'select 1'", "mysql --defaults-file=%s -e 'select 1'",
        "kubectl --kubeconfig=%s get pods", "docker --config=%s ps",
        "restic --password-command=%s -r /srv/repo snapshots",
        "apt-get -o APT::Update::Pre-Invoke::=%s update", "apt -c %s list",
        "tar -I %s -tf /tmp/x.tar", "tar --to-command=%s -xf /tmp/x.tar",
        "git -c core.pager=%s log", "zpool status -c %s", "sort --compress-program=%s /tmp/x",
        "find /tmp -name x -exec %s {} \\;", "rsync -e %s /tmp/a /tmp/b",
        "less --lesskey-src=%s /tmp/x", "ntpq -c %s"]) % prog


# ---- 2. abbreviations -----------------------------------------------------------------
IP_OBJECTS = ["address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour",
              "ntable", "ntbl", "link", "l2tp", "fou", "ila", "macsec", "tunnel", "tunl",
              "tuntap", "tap", "token", "tcpmetrics", "tcp_metrics", "monitor", "xfrm", "mroute",
              "mrule", "netns", "netconf", "vrf", "sr", "nexthop", "mptcp", "ioam", "stats"]
IP_SUBS = {
    "address": ["add", "change", "chg", "replace", "delete", "flush", "show", "lst", "list",
                "save", "showdump", "restore"],
    "route": ["add", "change", "chg", "replace", "prepend", "append", "test", "delete", "list",
              "show", "lst", "get", "flush", "save", "restore", "showdump"],
    "link": ["add", "set", "change", "replace", "delete", "show", "lst", "list"],
    "neighbor": ["add", "change", "chg", "replace", "delete", "show", "list", "lst", "get",
                 "flush"],
}
IP_CHANGES = {"add", "change", "chg", "replace", "delete", "flush", "prepend", "append",
              "restore", "set"}
IP_ARGS = {"add": "10.0.0.9/24 dev eth0", "delete": "10.0.0.9/24 dev eth0", "flush": "dev eth0",
           "set": "eth0 down", "replace": "default via 10.0.0.1", "change": "dev eth0",
           "chg": "dev eth0", "prepend": "default via 10.0.0.1", "append": "default via 10.0.0.1",
           "restore": "", "test": ""}


def resolving_prefix(word, order):
    """The prefixes of word that resolve to word: the first in order that
    starts with the prefix is word."""
    out = []
    for n in range(1, len(word) + 1):
        p = word[:n]
        first = next(w for w in order if w.startswith(p))
        if first == word:
            out.append(p)
    return out


def abbreviations():
    k = rng.randrange(4)
    if k < 3:
        obj = pick(list(IP_SUBS))
        sub = pick([s for s in IP_SUBS[obj] if s in IP_CHANGES])
        op = pick(resolving_prefix(obj, IP_OBJECTS))
        sp = pick(resolving_prefix(sub, IP_SUBS[obj]))
        opts = pick(["", "-4 ", "-s ", "-d ", "-br ", "-j "])
        return 2, ("ip %s%s %s %s" % (opts, op, sp, IP_ARGS.get(sub, ""))).strip()
    # long options of journalctl/systemctl abbreviated to something that changes state
    if rng.randrange(3) == 0:
        return 1, pick(["journalctl --rot", "journalctl --flu", "journalctl --setup-k",
                        "journalctl --relinquish", "journalctl --sync"])
    return 2, pick(["journalctl --vacuum-s=1M", "journalctl --vacuum-t=1d",
                    "journalctl --vacuum-f=1", "journalctl --cursor-fi=/etc/x",
                    "systemctl --reboot-arg=x status", "systemctl --firmware status",
                    "systemctl --boot-loader-m=5 status"])


# ---- 3. tools that run several commands ------------------------------------------
def multi_command():
    return 2, pick([
        "tmux ls \\; kill-server", "tmux list-sessions \\; run-shell reboot",
        "tmux has-session -t x \\; send-keys -t x reboot Enter",
        "ovs-vsctl show -- del-br vmbr0", "ovs-vsctl list-br -- add-port vmbr0 eth9",
        "ovs-vsctl list Bridge -- set Bridge vmbr0 stp_enable=true",
        "nft list ruleset \\; flush ruleset", "nft 'list ruleset; flush ruleset'",
        "nft list tables \\; delete table inet filter",
        "parted -s /dev/sda print rm 1", "parted /dev/sda print mklabel gpt",
        "parted -s /dev/sda unit s print mkpart p 1 100",
        "chronyc -m tracking 'settime 10:00'", "chronyc -m sources makestep",
        "chronyc tracking makestep",
    ])


# ---- 4. environment that makes programs write or run ---------------------------
ENV = ["GIT_TRACE=/etc/x", "GIT_TRACE_PACKET=/root/.bashrc", "LD_PRELOAD=/tmp/x.so",
       "LD_LIBRARY_PATH=/tmp", "PAGER='sh -c reboot'", "SYSTEMD_PAGER=/tmp/x",
       "SYSTEMD_LESS=x", "PYTHONSTARTUP=/tmp/x.py", "PERL5OPT=-Mx", "BASH_ENV=/tmp/x",
       "ENV=/tmp/x", "PROMPT_COMMAND=reboot", "APT_DEBUG_FILE=/etc/x", "FOO_DEBUG_FILE=/etc/x",
       "EDITOR=/tmp/x", "MANPAGER=/tmp/x", "LESSOPEN='|/tmp/x %s'", "GCONV_PATH=/tmp",
       "SSLKEYLOGFILE=/etc/x", "MALLOC_CONF=x", "XYZ=1", "HOME=/tmp", "GIT_DIR=/tmp/x"]
OBS = ["git status", "systemctl status pveproxy", "ls -la", "journalctl -n 5", "df -h",
       "man ls", "ps aux", "qm list", "curl -s http://x", "uptime"]


def environment():
    e, o = pick(ENV), pick(OBS)
    return 2, pick(["%s %s" % (e, o), "env %s %s" % (e, o), "export %s; %s" % (e, o),
                    "sudo %s %s" % (e, o), "PS4='$(reboot)'; set -x; %s" % o])


# ---- 5. builtins that evaluate -----------------------------------------------------
def builtins():
    payload = pick(["reboot", "rm -rf /var/lib/vz", "apt-get install x", "systemctl enable x"])
    sub = "a[$(%s)]" % payload
    return 2, pick([
        "let %s" % shlex.quote(sub + "=1"), "let %s" % shlex.quote("x=" + sub),
        "[[ $x -eq 1 ]] && echo y", "[[ %s -gt 0 ]]" % sub, "[[ -v %s ]]" % shlex.quote(sub),
        "test -v %s" % shlex.quote(sub), "[ -v %s ]" % shlex.quote(sub),
        "printf -v %s x" % shlex.quote(sub), "read %s < /tmp/x" % shlex.quote(sub),
        "mapfile -C %s -c 1 a < /tmp/x" % shlex.quote(payload),
        "readarray -C cb a < /tmp/x", "compgen -C %s x" % shlex.quote(payload),
        "compgen -F f x", "declare %s" % shlex.quote(sub + "=1"),
        "typeset -a %s" % shlex.quote(sub), "local %s" % shlex.quote(sub),
        "echo $(( %s ))" % sub, "(( %s ))" % sub, "trap %s EXIT" % shlex.quote(payload),
        "eval %s" % shlex.quote(payload), "source /tmp/x.sh", ". /tmp/x.sh",
        "x=$(cat /tmp/f); [[ $x -ge 1 ]]", "read -r x < /tmp/f; echo \"${x@P}\"",
        "read -r x < /tmp/f; echo ${!x}", "declare -n r=%s; echo $r" % shlex.quote(sub),
    ])


# ---- 6. disks, firmware, boot, cluster ----------------------------------------------
def disks():
    d = pick(["/dev/nvme0", "/dev/nvme0n1"])
    return pick([
        (3, "nvme format %s" % d), (3, "nvme sanitize %s -a 2" % d),
        (3, "nvme write %s -s 0 -c 1 -z 512 -d /tmp/x" % d),
        (3, "nvme admin-passthru %s -o 0x80" % d), (3, "nvme io-passthru %s -o 1" % d),
        (3, "nvme zns reset-zone %s -a" % d), (3, "nvme fw-commit %s -a 1" % d),
        (2, "nvme fw-download %s -f /tmp/fw" % d), (2, "nvme set-feature %s -f 6 -v 0" % d),
        (2, "nvme create-ns %s -s 100 -c 100" % d),
        (3, "hdparm --security-erase p /dev/sda"), (2, "hdparm -W0 /dev/sda"),
        (3, "hdparm --trim-sector-ranges 0:8 /dev/sda"), (2, "hdparm -S 12 /dev/sda"),
        (2, "ioping -W -c 3 /dev/sda"), (2, "bootctl install"), (2, "bootctl update"),
        (2, "bootctl set-default x.conf"), (2, "bootctl remove"),
        (2, "kernel-install add 6.8 /boot/vmlinuz-6.8"), (2, "kernel-install remove 6.8"),
        (2, "efibootmgr -o 0001,0002"), (2, "efibootmgr -B -b 0003"), (2, "efibootmgr -n 0002"),
        (2, "efibootmgr -c -d /dev/sda -p 1 -L x -l x.efi"),
        (2, "udevadm info --cleanup-db"), (2, "systemd-analyze service-watchdogs no"),
        (2, "systemd-analyze log-level debug"), (2, "rbd rm rbd/vm-100-disk-0"),
        (2, "cryptsetup luksKillSlot /dev/sda3 0"), (2, "pvenode stopall"),
        (3, "pkill corosync"), (3, "killall pmxcfs"), (3, "pkill -f pve-cluster"),
        (3, "killall -9 pve-ha-lrm"), (2, "smartctl -t long /dev/sda"),
        (2, "smartctl -s off /dev/sda"), (2, "blockdev --setro /dev/sda"),
        (3, "wipefs -a /dev/sdb"), (3, "sgdisk -Z /dev/sdb"),
        (2, "proxmox-boot-tool format /dev/sda2"), (2, "nvme reset %s" % d),
    ])


# ---- 7. secret material -----------------------------------------------------------
SECRETS = ["/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_ed25519_key",
           "/etc/ssh/ssh_host_rsa_key", "/etc/pve/priv/authkey.key", "/etc/pve/priv/shadow.cfg",
           "/etc/pve/local/pve-ssl.key", "/etc/ceph/ceph.client.admin.keyring",
           "/var/lib/ceph/osd/ceph-0/keyring", "/root/.pgpass", "/root/.kube/config",
           "/root/.aws/credentials", "/proc/1/environ", "/proc/self/environ",
           "~/.ssh/id_rsa", "~/.ssh/id_ed25519", "/home/ops/.ssh/id_ecdsa",
           "/etc/corosync/authkey", "/var/lib/pve-cluster/config.db", "/etc//shadow",
           "/etc/./gshadow", "/etc/ssh/../ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_*_key",
           "/etc/pve/priv/*", "/srv/tls/server.key"]
READERS = ["cat {}", "head -n 5 {}", "tail {}", "grep -i x {}", "strings {}", "xxd {}",
           "base64 {}", "od -c {}", "awk 1 {}", "sed -n p {}", "cut -c1-10 {}", "wc -c {}",
           "cat < {}", "dd if={} bs=1 count=100", "md5sum {}", "openssl rsa -in {} -noout -text",
           "ssh-keygen -y -f {}", "cp {} /tmp/k", "tar -cf /tmp/k.tar {}", "less {}",
           "xargs -a {} echo", "xargs --arg-file={} echo", "du --files0-from={}",
           "wc --files0-from={}", "grep -f {} /dev/null"]


def secrets():
    s = pick(SECRETS)
    r = pick(READERS)
    if rng.randrange(5) == 0 and s.startswith("/etc/"):
        d, _, f = s[1:].rpartition("/")
        return 2, "cd /%s && %s" % (d, r.format(f))
    return 2, r.format(s)


# ---- observations that must stay read_only ------------------------------------
UNITS = ["pveproxy", "pvedaemon", "nginx", "ssh", "corosync", "zfs-import-cache"]


def observation():
    u = pick(UNITS)
    return 0, pick([
        "systemctl status %s" % u, "systemctl status %s --no-pager -l" % u,
        "systemctl --no-pag status %s" % u, "systemctl is-active %s" % u,
        "systemctl show -p ActiveState,SubState %s" % u, "systemctl show --property=MainPID %s" % u,
        "systemctl list-units --type=service --state=failed", "systemctl list-timers --all",
        "journalctl -u %s -n %d --no-pager" % (u, rng.randint(5, 500)),
        "journalctl -u %s --since '1 hour ago'" % u, "journalctl -b -1 -p err",
        "journalctl -k --since=today", "journalctl --disk-usage", "journalctl -xeu %s" % u,
        "journalctl -o json-pretty -n 3", "journalctl --list-boots",
        "ip a", "ip -br a", "ip -4 -o addr show dev vmbr0", "ip r", "ip route get 1.1.1.1",
        "ip -s link", "ip -d link show vmbr0", "ip n", "ip -6 route show table all",
        "ip addr sh", "ip link ls", "ip -j -p a",
        "ss -tulpn", "ss -s", "ss -tanp state established", "df -h", "df -hT", "df -i /",
        "du -sh /var/lib/vz", "du -h --max-depth=1 /var/log", "free -h", "free -m -t",
        "ps aux", "ps -ef --forest", "ps -eo pid,comm,%mem --sort=-%mem", "top -b -n 1",
        "top -bn1 -o %MEM", "uptime", "uptime -p", "uname -a", "uname -r", "lsblk",
        "lsblk -o NAME,SIZE,FSTYPE,MOUNTPOINT", "lsblk -f", "blkid", "blkid /dev/sda1",
        "mount", "findmnt", "findmnt -t nfs,nfs4", "findmnt -no SOURCE /",
        "cat /etc/hosts", "head -n 20 /var/log/syslog", "tail -n 100 /var/log/syslog",
        "tail -f -n 20 /var/log/syslog", "grep -i error /var/log/syslog",
        "grep -rn --include=*.conf nfs /etc/nginx", "ls -lah /etc/pve", "ls -lt /var/lib/vz/dump",
        "stat /etc/hosts", "stat -c '%s %y' /var/log/syslog",
        "find /var/log -name '*.gz' -mtime +7", "find /etc -maxdepth 1 -type f -newer /tmp/x",
        "qm list", "qm list --full", "qm config 100", "qm config 100 --current",
        "qm status 100 --verbose", "qm pending 100", "pct list", "pct config 101",
        "pct status 101", "pvesh get /nodes --output-format json",
        "pvesh get /cluster/resources --type vm --output-format json-pretty",
        "pvecm status", "pvecm nodes", "pvesm status", "pvesm list local",
        "ha-manager status", "ha-manager status --verbose 1", "zpool status", "zpool status -x",
        "zpool list -v", "zpool iostat -v 1 3", "zfs list", "zfs list -t snapshot -o name,used",
        "zfs get compressratio rpool", "ceph -s", "ceph status", "ceph health detail",
        "ceph osd tree", "ceph df", "dmesg -T", "dmesg --level=err,warn", "lscpu", "lspci -nnk",
        "lsusb", "sensors", "smartctl -a /dev/sda", "smartctl -H /dev/sda", "smartctl -i /dev/sda",
        "nvme list", "nvme smart-log /dev/nvme0", "curl -s http://localhost:8006",
        "curl -fsS https://example.com/status.json", "curl -sI https://x",
        "wget -qO- --max-redirect=0 http://x", "wget --spider --max-redirect 0 http://x",
        "apt list --installed",
        "apt policy nfs-common", "apt show nfs-common", "apt-cache policy pve-manager",
        "dpkg -l", "dpkg -s nfs-common", "dpkg -L nfs-common", "dpkg-query -W pve-manager",
        "pveversion -v", "cat /proc/meminfo", "vmstat 1 5", "iostat -x 1 3",
        "ip -s -s link show dev eth0", "ethtool eth0", "ethtool -S eth0",
        "iptables -L -n -v", "iptables -S", "nft list ruleset", "nft list tables",
        "chronyc tracking", "chronyc sources -v", "timedatectl", "timedatectl show",
        "hostnamectl", "lsmod", "modinfo zfs", "sysctl -a", "sysctl net.ipv4.ip_forward",
        "cat /sys/class/net/eth0/operstate", "who", "last -n 5", "id", "getent passwd root",
        "tmux ls", "ovs-vsctl show", "parted -l", "parted -s /dev/sda print",
    ])


FAMILIES = [("options-with-values", options_with_values), ("abbreviations", abbreviations),
            ("multi-command", multi_command), ("environment", environment),
            ("builtins", builtins), ("disks-firmware", disks), ("secrets", secrets),
            ("observation", observation), ("observation", observation)]


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


for _ in range(COUNT):
    name, fam = pick(FAMILIES)
    rank, cmd = fam()
    target = pick(["proxmox-host", "vm", "lxc"])
    if name == "observation":
        cmd = pick(["", "", "sudo ", "timeout 10 ", "LC_ALL=C "]) + cmd + \
            pick(["", "", " | head", " 2>/dev/null", " | grep -c x"])
    else:
        cmd = wrap(cmd)
    print("%d\t%s\t%s\t%s" % (rank, name, target, esc(cmd)))
