-- 0006_confinement.sql -- the read-only jail is part of the recorded truth.
--
-- A command that runs without approval runs in a read-only jail on its
-- target (docs/transport.md).  This migration records how each execution was
-- confined, lets the scheduler record what each target can do
-- (attribute `confinement`: full | root-tier | none), and lets the worker
-- hand back to a human an observation the jail could not be built for.

ALTER TABLE airlock.executions ADD COLUMN IF NOT EXISTS confinement text
	CHECK (confinement IN ('none', 'user', 'root'));
COMMENT ON COLUMN airlock.executions.confinement IS
	'How the command ran: user (read-only jail, uid 65534 with only CAP_DAC_READ_SEARCH), '
	'root (read-only jail, uid 0 without capabilities), none (unconfined: approved by a human, '
	'or a class the jail does not apply to).  NULL until it is started.';

INSERT INTO airlock.scheduler_keys (key, reason) VALUES
	('confinement', 'confinement is scheduler-owned (probed by building the read-only jail on the target); attribute ignored. Use get_health_summary to observe it.')
ON CONFLICT (key) DO NOTHING;

-- The jail is built after the row is marked running (durably, before a byte
-- is sent); when it cannot be built the command never started, and the row
-- goes back to a human instead of running unreviewed.
INSERT INTO airlock.transitions (from_state, to_state) VALUES ('running', 'pending_approval')
ON CONFLICT DO NOTHING;

-- How the row will be confined, set right before worker_start.
CREATE FUNCTION airlock.worker_confine(exec_id bigint, worker text, confinement text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
	IF confinement IS NULL OR confinement NOT IN ('none', 'user', 'root') THEN
		RAISE EXCEPTION 'worker_confine: confinement "%" is not none, user or root', confinement
			USING ERRCODE = 'AL002';
	END IF;
	IF confinement = 'none' AND e.state <> 'approved' AND e.class = 'read_only' THEN
		RAISE EXCEPTION 'execution %: an observation that no human approved runs in the jail', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	UPDATE airlock.executions x SET confinement = worker_confine.confinement WHERE x.id = exec_id;
END
$$;

-- worker_start as in 0002, and the running event says how it is confined.
CREATE OR REPLACE FUNCTION airlock.worker_start(exec_id bigint, worker text, rewind_points jsonb, guard jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	votes integer;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
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
		rewind_points = worker_start.rewind_points
	WHERE x.id = exec_id;
	PERFORM airlock._event(exec_id, e.state, 'running', jsonb_build_object('worker', worker,
		'rewind_points', rewind_points, 'guard', guard,
		'confinement', coalesce(e.confinement, 'none')));
END
$$;

-- The jail could not be built on the target: the command never started.
-- The row waits for a human, with reason ("cannot confine an observation on
-- <target>: <why>") as its error, so agent and operator both read it.
CREATE FUNCTION airlock.worker_unconfinable(exec_id bigint, worker text, reason text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	SELECT * INTO e FROM airlock.executions x WHERE x.id = exec_id FOR UPDATE;
	IF NOT FOUND OR e.claimed_by IS DISTINCT FROM worker OR e.state <> 'running' THEN
		RAISE EXCEPTION 'execution % is not held by worker % in state running', exec_id, worker
			USING ERRCODE = 'AL005';
	END IF;
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'worker_unconfinable: a reason is required' USING ERRCODE = 'AL002';
	END IF;
	UPDATE airlock.executions x SET error = reason, started_at = NULL, confinement = NULL,
		rewind_points = NULL
	WHERE x.id = exec_id;
	PERFORM airlock._hold_for_approval(exec_id, e.class);
	PERFORM airlock._event(exec_id, 'running', 'pending_approval', jsonb_build_object(
		'unconfinable', reason, 'nothing_ran', true, 'confinement', e.confinement,
		'worker', worker));
END
$$;

-- 0001's _execution_json with the confinement.
CREATE OR REPLACE FUNCTION airlock._execution_json(e airlock.executions, with_output boolean) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'id', e.id, 'target', e.target, 'target_type', e.target_type, 'command', e.command,
		'declared_risk', e.declared_risk, 'change_id', e.change_id, 'action', e.action,
		'requested_by', e.requested_by, 'state', e.state, 'class', e.class,
		'reasons', e.reasons, 'policy_version', e.policy_version,
		'classifier_version', e.classifier_version,
		'created_at', e.created_at, 'classified_at', e.classified_at, 'expires_at', e.expires_at,
		'decided_at', e.decided_at, 'started_at', e.started_at, 'finished_at', e.finished_at,
		'approvals_required', e.approvals_required,
		'approvals', (SELECT jsonb_agg(jsonb_build_object('by', a.approver, 'decision', a.decision,
				'reason', a.reason, 'at', a.at) ORDER BY a.at)
			FROM airlock.approvals a WHERE a.execution_id = e.id),
		'rewind_status', e.rewind_status, 'rewind_possible', e.rewind_possible,
		'rewind_points', e.rewind_points,
		'confinement', e.confinement,
		'exit_code', e.exit_code, 'signal', e.signal,
		'stdout', CASE WHEN with_output THEN airlock._output_text(e.stdout) END,
		'stderr', CASE WHEN with_output THEN airlock._output_text(e.stderr) END,
		'stdout_truncated', e.stdout_truncated, 'stderr_truncated', e.stderr_truncated,
		'duration_ms', e.duration_ms, 'error', e.error,
		'next_step', airlock._next_step(e)))
$$;

-- 0001's get_health_summary with each target's confinement, so an agent
-- knows before asking whether its observations will run unreviewed.
CREATE OR REPLACE FUNCTION airlock.get_health_summary(slug text DEFAULT NULL) RETURNS SETOF jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF slug IS NOT NULL AND NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = get_health_summary.slug) THEN
		RAISE EXCEPTION 'get_health_summary: unknown entity "%"', slug USING ERRCODE = 'AL001';
	END IF;
	RETURN QUERY
		SELECT jsonb_strip_nulls(jsonb_build_object('slug', e.slug, 'type', e.type, 'node', e.node,
			'health', e.attributes ->> 'health',
			'qemu_guest_agent', CASE WHEN e.type = 'vm' THEN coalesce(e.attributes ->> 'qemu_guest_agent', 'unknown') END,
			'container_status', CASE WHEN e.type = 'lxc' THEN coalesce(e.attributes ->> 'container_status', 'unknown') END,
			'reachable', e.attributes -> 'reachable',
			'confinement', coalesce(e.attributes ->> 'confinement', 'unknown'),
			'checks_ok', (SELECT count(*) FROM airlock.checks c WHERE c.entity = e.slug AND c.status = 'ok'),
			'checks_failing', (SELECT count(*) FROM airlock.checks c WHERE c.entity = e.slug AND c.status IN ('failing', 'warning')),
			'last_probe', (SELECT max(c.probed_at) FROM airlock.checks c WHERE c.entity = e.slug)))
		FROM airlock.entities e
		WHERE get_health_summary.slug IS NULL OR e.slug = get_health_summary.slug
		ORDER BY e.slug;
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION
	airlock.worker_confine(bigint, text, text),
	airlock.worker_unconfinable(bigint, text, text)
TO airlock_worker;
