#!/bin/bash
# The secret scanner on the worker's path (lib/secretscan.h): milliseconds per
# MiB of harmless output, of output with a secret in its last line, and of
# inputs built to make every check look as far as it may, beside one memcpy of
# the same bytes.  The worker scans at most the output cap (1 MiB per stream
# by default) of each command nobody approved.
set -uo pipefail
cd "$(dirname "$0")/../.."
make -s build/bench/secretscan_bench || exit 1
build/bench/secretscan_bench "${SECRETSCAN_BENCH_MIB:-1}" "${SECRETSCAN_BENCH_ROUNDS:-50}"
