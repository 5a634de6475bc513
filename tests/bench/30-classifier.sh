#!/bin/bash
# Classifier speed over the corpus (tests/data/classifier*.tsv): classifications
# per second on one core, median / p90 / p99 per command, heap growth (a reused
# verdict should not grow), and the CLI's --batch throughput end to end.
set -uo pipefail
cd "$(dirname "$0")/../.."
make -s build/bench/classifier_bench || exit 1
rounds=${CLASSIFIER_BENCH_ROUNDS:-50}
build/bench/classifier_bench seeds/policy.yaml "$rounds" tests/data/classifier*.tsv || exit 1
if [ ! -x build/bin/airlock ]; then
	echo "classifier: build/bin/airlock not built: no --batch measurement"
	exit 0
fi
tmp=$(mktemp /tmp/airlock-classifier-bench.XXXXXX)
trap 'rm -f "$tmp"' EXIT
for _ in $(seq 20); do grep -hv '^#' tests/data/classifier*.tsv | cut -f2-; done >"$tmp"
lines=$(wc -l <"$tmp")
start=$(date +%s%N)
build/bin/airlock classify --batch --policy seeds/policy.yaml <"$tmp" >/dev/null || exit 1
ns=$(( $(date +%s%N) - start ))
echo "classifier: airlock classify --batch: $lines lines in $(( ns / 1000000 )) ms" \
	"($(( lines * 1000000000 / ns )) lines/s, including process start and output)"
