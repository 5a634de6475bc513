#!/bin/bash
# airlockd's steady state under valgrind: no leaks, no memory errors.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/daemon/valgrind.sh
