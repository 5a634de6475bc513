#!/bin/bash
# libFuzzer over the classifier (tests/fuzz/classifier_fuzz.c) for about a
# minute, seeded with the corpus in tests/data/classifier*.tsv.  Fails on a
# crash, a sanitizer report, a leak, a timeout (10 s per input) or memory
# past 2 GiB.  Longer runs: docs/classifier.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
fuzz=build/fuzz/classifier_fuzz
secs=${CLASSIFIER_FUZZ_SECONDS:-60}
[ -x "$fuzz" ] || { echo "classifier-fuzz: $fuzz not built (make fuzz)"; exit 1; }
tmp=$(mktemp -d /tmp/airlock-classifier-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/corpus" "$tmp/artifacts"
python3 - "$tmp/corpus" tests/data/classifier*.tsv <<'PY'
import sys, os
out = sys.argv[1]
n = 0
targets = {"proxmox-host": 0, "vm": 1, "lxc": 2}
for path in sys.argv[2:]:
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        if line.startswith("#") or "\t" not in line:
            continue
        _, target, cmd = line.rstrip("\n").split("\t", 2)
        cmd = cmd.replace("\\\\", "\0").replace("\\n", "\n").replace("\\t", "\t").replace("\0", "\\")
        with open(os.path.join(out, "c%05d" % n), "wb") as f:
            f.write(bytes([targets.get(target, 0)]) + cmd.encode("utf-8", "surrogateescape"))
        n += 1
grammar_seeds = [b"\x04\x01\x00-a -b -n= --lines= --color=? --all --list-units\n-ab -n5 --li 3 x",
                 b"\x04\x02\x01-brief -details -name= -exec=;\nsh -br x -exec ls ; -name y",
                 b"\x04\x00\x00--out= -o= --x=b\nsub -q --quiet=1 -- -o\nset 1 2 3",
                 b"\x04\x01\x00-x\n$(echo --out) ; st x --x 1"]
for i, g in enumerate(grammar_seeds):
    with open(os.path.join(out, "g%d" % i), "wb") as f:
        f.write(g)
with open(os.path.join(out, "policy"), "wb") as f:
    f.write(b"\x03defaults: {}\nrules:\n  - {id: a, programs: [ls], class: read_only}\n")
PY
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$fuzz" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
	-detect_leaks=1 -artifact_prefix="$tmp/artifacts/" -print_final_stats=1 \
	"$tmp/corpus" >"$tmp/log" 2>&1
rc=$?
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ +DONE' "$tmp/log"
if [ $rc -ne 0 ] || ls "$tmp/artifacts"/* >/dev/null 2>&1; then
	tail -60 "$tmp/log"
	for a in "$tmp/artifacts"/*; do
		[ -f "$a" ] && { echo "classifier-fuzz: artifact $a:"; od -c "$a" | head -20; }
	done
	echo "classifier-fuzz: FAILED (exit $rc)"
	exit 1
fi
echo "classifier-fuzz: ok"
