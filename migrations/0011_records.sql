-- 0011_records.sql -- the chained records cover what later migrations added
-- to a request and an approval: the request's kind, how it was confined,
-- the gate policy that decided its quorum, how long its approval holds, and
-- the target's probed state when it was approved.  Every existing row gets a
-- fresh record (marked backfill), so that verification compares like with
-- like.  cli/audit.c computes the same records independently; the two change
-- together.

CREATE OR REPLACE FUNCTION airlock._execution_record(e airlock.executions) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_build_object(
		'state', e.state,
		'target', e.target, 'target_type', e.target_type, 'requested_by', e.requested_by,
		'command_sha256', encode(sha256(convert_to(e.command, 'UTF8')), 'hex'),
		'declared_risk', e.declared_risk, 'change_id', e.change_id, 'action', e.action,
		'class', e.class,
		'reasons_sha256', encode(sha256(convert_to(e.reasons::text, 'UTF8')), 'hex'),
		'policy_version', e.policy_version, 'payload_hash', e.payload_hash,
		'approvals_required', e.approvals_required, 'rewind_status', e.rewind_status,
		'rewind_possible', e.rewind_possible, 'rewind_points', e.rewind_points,
		'exit_code', e.exit_code, 'signal', e.signal,
		'stdout_sha256', encode(sha256(e.stdout), 'hex'), 'stdout_bytes', octet_length(e.stdout),
		'stderr_sha256', encode(sha256(e.stderr), 'hex'), 'stderr_bytes', octet_length(e.stderr),
		'stdout_truncated', e.stdout_truncated, 'stderr_truncated', e.stderr_truncated,
		'duration_ms', e.duration_ms, 'error', e.error)
	|| jsonb_build_object(
		'kind', e.kind, 'confinement', e.confinement, 'gate_version', e.gate_version,
		'approval_valid_until', to_char(e.approval_valid_until AT TIME ZONE 'UTC',
			'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		'approved_probe', e.approved_probe)
$$;

CREATE OR REPLACE FUNCTION airlock._approval_record(a airlock.approvals) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_build_object('id', a.id, 'execution_id', a.execution_id, 'approver', a.approver,
		'decision', a.decision, 'reason', a.reason, 'payload_hash', a.payload_hash,
		'rewind_status', a.rewind_status,
		'at', to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		'gate_version', a.gate_version)
$$;

DROP TRIGGER executions_record_update ON airlock.executions;
-- Claims and leases alone do not write a record.
CREATE TRIGGER executions_record_update AFTER UPDATE ON airlock.executions
	FOR EACH ROW WHEN ((OLD.state, OLD.target, OLD.target_type, OLD.requested_by, OLD.command,
		OLD.declared_risk, OLD.change_id, OLD.action, OLD.class, OLD.reasons, OLD.policy_version,
		OLD.payload_hash, OLD.approvals_required, OLD.rewind_status, OLD.rewind_possible,
		OLD.rewind_points, OLD.exit_code, OLD.signal, OLD.stdout, OLD.stderr,
		OLD.stdout_truncated, OLD.stderr_truncated, OLD.duration_ms, OLD.error,
		OLD.kind, OLD.confinement, OLD.gate_version, OLD.approval_valid_until,
		OLD.approved_probe)
		IS DISTINCT FROM (NEW.state, NEW.target, NEW.target_type, NEW.requested_by, NEW.command,
		NEW.declared_risk, NEW.change_id, NEW.action, NEW.class, NEW.reasons, NEW.policy_version,
		NEW.payload_hash, NEW.approvals_required, NEW.rewind_status, NEW.rewind_possible,
		NEW.rewind_points, NEW.exit_code, NEW.signal, NEW.stdout, NEW.stderr,
		NEW.stdout_truncated, NEW.stderr_truncated, NEW.duration_ms, NEW.error,
		NEW.kind, NEW.confinement, NEW.gate_version, NEW.approval_valid_until,
		NEW.approved_probe))
	EXECUTE FUNCTION airlock._record_execution();

-- Existing rows: a fresh record in the new form.
SELECT airlock._event(e.id, 'record', 'record',
	jsonb_build_object('record', 'execution', 'execution', airlock._execution_record(e),
		'backfill', true))
FROM airlock.executions e ORDER BY e.id;
SELECT airlock._event(a.execution_id, 'record', 'record',
	jsonb_build_object('record', 'approval', 'approval', airlock._approval_record(a), 'backfill', true))
FROM airlock.approvals a ORDER BY a.id;

SELECT airlock._secure_new_objects();
