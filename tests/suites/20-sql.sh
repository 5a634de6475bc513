#!/bin/bash
# The schema and SQL API on a real throwaway PostgreSQL: migrations, seeds,
# roles, pre-flight, the gate's rules, the append-only hash chain (pgTAP).
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/sql/run.sh
