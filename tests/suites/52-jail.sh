#!/bin/bash
# 52-jail: airlockd's read-only jail end to end on the rig and a throwaway
# database: escapes on the host, a VM and a container fail and leave nothing
# behind (checked on the target afterwards); plain observations keep their
# output; an unconfinable target's observations go to a human; the probes
# record each target's confinement.  See tests/jail/run.sh.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/jail/run.sh
