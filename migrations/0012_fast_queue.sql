-- 0012_fast_queue.sql -- the queue's hot path: fewer statements per
-- execution, cheaper events.
--
-- 1. The chained records and event hashes are computed by PL/pgSQL instead
--    of SQL functions.  The output is the same to the byte (suite 20-sql
--    compares both forms); what changes is the cost: a SQL function that
--    cannot be inlined (these pin search_path) is parsed and planned again
--    at every call, about 0.2 ms for the record, while PL/pgSQL keeps its
--    plan for the session.  Every state change of a row pays for one record
--    and every event for one hash.
-- 2. worker_start takes the confinement too, so starting a row is one
--    statement, one record and one event instead of two statements and two
--    records (worker_confine then worker_start).  The two-statement form
--    stays for callers that use it.

-- ---------------------------------------------------------------- records and hashes

CREATE OR REPLACE FUNCTION airlock._execution_record(e airlock.executions) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
BEGIN
	RETURN jsonb_build_object(
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
		'approved_probe', e.approved_probe);
END
$$;

CREATE OR REPLACE FUNCTION airlock._event_hash(e airlock.execution_events) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = airlock, pg_temp AS $$
BEGIN
	RETURN encode(sha256(convert_to(
		e.prev_hash || '|' || e.id || '|' || e.execution_id || '|' ||
		to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' ||
		e.actor || '|' || coalesce(e.from_state, '') || '|' || e.to_state || '|' ||
		e.detail::text, 'UTF8')), 'hex');
END
$$;

-- ---------------------------------------------------------------- start in one statement

-- worker_confine and worker_start (0006) in one transaction and one row
-- update: the same checks, the same running event (which says how the row
-- is confined), one record.
CREATE FUNCTION airlock.worker_start(exec_id bigint, worker text, rewind_points jsonb, guard jsonb,
	confinement text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	votes integer;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
	IF confinement IS NULL OR confinement NOT IN ('none', 'user', 'root') THEN
		RAISE EXCEPTION 'worker_start: confinement "%" is not none, user or root', confinement
			USING ERRCODE = 'AL002';
	END IF;
	IF confinement = 'none' AND e.state <> 'approved' AND e.class = 'read_only' THEN
		RAISE EXCEPTION 'execution %: an observation that no human approved runs in the jail', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	IF e.state = 'approved' THEN
		SELECT count(*) INTO votes FROM airlock.approvals a
		WHERE a.execution_id = exec_id AND a.decision = 'approve' AND a.payload_hash = e.payload_hash;
		IF votes < greatest(e.approvals_required, 1) THEN
			RAISE EXCEPTION 'execution %: approvals do not match the payload', exec_id
				USING ERRCODE = 'AL008';
		END IF;
	ELSIF airlock._class_rank(e.class) > 1 THEN
		RAISE EXCEPTION 'execution %: % needs approval', exec_id, e.class USING ERRCODE = 'AL008';
	END IF;
	UPDATE airlock.executions x SET state = 'running', started_at = now(),
		rewind_points = worker_start.rewind_points, confinement = worker_start.confinement
	WHERE x.id = exec_id;
	PERFORM airlock._event(exec_id, e.state, 'running', jsonb_build_object('worker', worker,
		'rewind_points', rewind_points, 'guard', guard, 'confinement', confinement));
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION airlock.worker_start(bigint, text, jsonb, jsonb, text) TO airlock_worker;
