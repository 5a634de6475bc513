#!/bin/bash
# The queue's SQL path alone, phase by phase: PostgreSQL's CPU per read-only
# execution for run(), the worker's two calls and the sealer, without
# airlockd or the rig.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/daemon/sqlpath.sh
