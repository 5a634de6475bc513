#!/bin/bash
# 53-outhold: output that carries secret material is held for an operator, end
# to end on the rig and a throwaway database: every kind and spelling of
# secret from tests/outhold/secretgen.py, read on the host, a VM and a
# container, must leave no byte in anything an agent reads (its functions,
# the CLI, airlock-mcp, webhooks), in the chain or in the log; operators see,
# release and discard it.  See tests/outhold/run.sh.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/outhold/run.sh
