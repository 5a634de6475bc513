#!/bin/bash
# airlock-web, the operator's console: HTTP-level checks and a real headless
# Chromium against a real airlockd, the rig and a throwaway PostgreSQL
# (tests/web/run.sh, tests/web/browser.mjs).
set -uo pipefail
cd "$(dirname "$0")/../.."
for tool in node npm curl openssl python3 psql chromium; do
	command -v "$tool" >/dev/null || { echo "85-web: $tool is missing (scripts/install-deps)"; exit 1; }
done
[ -x build/bin/airlock-web ] && [ -x build/bin/airlockd ] && [ -x build/bin/airlock ] ||
	{ echo "85-web: build first (make)"; exit 1; }
# The browser driver is a devDependency installed from the lockfile (again
# whenever it changed), never fetched at run time.
scripts/npm-deps install tests/web || { echo "not ok - 85-web: playwright-core's npm install (above)"; exit 1; }
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/web/run.sh
