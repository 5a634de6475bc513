#!/bin/bash
# The schema and SQL API on a real throwaway PostgreSQL: migrations, seeds
# (gate.yaml included), roles, pre-flight, the gate's rules, the append-only
# hash chain (pgTAP); run()'s carry rule against the transport's; notification
# payloads; flood limits under concurrent sessions.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/sql/run.sh
