#!/bin/bash
# tests/ops/run.sh -- suite 80-ops: operating airlock.  Runs inside
# scripts/pgtmp, `tests/rig/rigctl run` and `tests/zvmsim/zvmsimctl run`.
#   tests/ops/run.sh [PART...]   parts: events notify schema doctor user init npm docs (default: all)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

for t in systemd-analyze python3 curl; do
	command -v "$t" >/dev/null || { echo "80-ops: $t missing (scripts/install-deps)"; exit 1; }
done
setup_db || { echo "80-ops: database set-up failed"; exit 1; }

# The highest migration this checkout ships: the schema version the binaries know.
shipped_last=$(ls migrations | grep -E '^[0-9]{4}_[a-z0-9_]+\.sql$' | sort | tail -1)
shipped_ver=${shipped_last%.sql}

parts=${*:-events notify schema doctor user init npm docs}
for part in $parts; do
	echo "# --- $part"
	if [ "$part" = docs ]; then
		# The guide starts from nothing: a database of its own.
		check "the deploy and operator guides, followed literally" \
			scripts/pgtmp --quiet -- tests/ops/docs.sh
		continue
	fi
	. "tests/ops/$part.sh"
done
finish
