-- 0028_output_hold.sql -- output that carries secret material is held for an
-- operator.
--
-- airlockd scans the stdout and stderr (and the error text) of every command
-- that ran without a human's approval, and of every preview, before it records
-- them (lib/secretscan.h).  A match holds the output: the request is final as
-- it ran (its state and exit code are true), its output goes into
-- airlock.output_holds, which only operators read, and its own stdout and
-- stderr stay empty, so that no function, view, answer, notification or
-- record an agent can reach carries a byte of it.  The agent reads that its
-- output is held, why, and what to ask of its operator.  An operator releases
-- the output (it becomes the request's stdout and stderr) or discards it (its
-- bytes are erased; their digests stay), always with a reason; both are
-- chained events, and so is the hold.  Nothing releases it by itself.

-- ---------------------------------------------------------------- the held output

CREATE TABLE airlock.output_holds (
	execution_id  bigint PRIMARY KEY REFERENCES airlock.executions (id),
	state         text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'released', 'discarded')),
	kind          text NOT NULL CHECK (kind ~ '^[a-z0-9_]{1,64}$'),
	label         text NOT NULL CHECK (octet_length(label) BETWEEN 1 AND 200),
	stream        text NOT NULL CHECK (stream IN ('stdout', 'stderr', 'error')),
	line          integer NOT NULL CHECK (line >= 1),
	-- the held bytes, while held; erased by a decision (a release moves them
	-- to the request's own columns)
	stdout        bytea,
	stderr        bytea,
	error         text,
	error_held    boolean NOT NULL,
	stdout_sha256 text,
	stdout_bytes  integer,
	stderr_sha256 text,
	stderr_bytes  integer,
	error_sha256  text,
	held_at       timestamptz NOT NULL DEFAULT now(),
	decided_by    text,
	decided_at    timestamptz,
	reason        text,
	CHECK ((state = 'held') = (decided_by IS NULL))
);
CREATE INDEX output_holds_held ON airlock.output_holds (held_at) WHERE state = 'held';

CREATE FUNCTION airlock._holds_kept() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'output_holds: a hold is never deleted (% is not allowed); discard its output instead (airlock output discard)',
		TG_OP USING ERRCODE = '42501';
END
$$;
CREATE TRIGGER output_holds_no_delete BEFORE DELETE OR TRUNCATE ON airlock.output_holds
	FOR EACH STATEMENT EXECUTE FUNCTION airlock._holds_kept();

-- What a hold's record holds: never its bytes, only their digests.
CREATE FUNCTION airlock._hold_record(h airlock.output_holds) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_build_object('execution_id', h.execution_id, 'state', h.state, 'kind', h.kind,
		'label', h.label, 'stream', h.stream, 'line', h.line, 'error_held', h.error_held,
		'stdout_sha256', h.stdout_sha256, 'stdout_bytes', h.stdout_bytes,
		'stderr_sha256', h.stderr_sha256, 'stderr_bytes', h.stderr_bytes,
		'error_sha256', h.error_sha256, 'decided_by', h.decided_by, 'reason', h.reason)
$$;

-- The sentence the agent, the operators and the webhooks read.
CREATE FUNCTION airlock._hold_message(h airlock.output_holds) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT format('output held: it contains %s at line %s of %s; an operator can release it.',
		h.label, h.line, h.stream)
$$;

-- What an agent may know of a hold: never a byte of the output.
CREATE FUNCTION airlock._hold_json(exec_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_strip_nulls(jsonb_build_object('state', h.state, 'kind', h.kind,
		'label', h.label, 'stream', h.stream, 'line', h.line,
		'message', CASE WHEN h.state = 'held' THEN airlock._hold_message(h) END,
		'stdout_bytes', h.stdout_bytes, 'stderr_bytes', h.stderr_bytes,
		'error_held', h.error_held, 'held_at', h.held_at, 'decided_by', h.decided_by,
		'decided_at', h.decided_at, 'reason', h.reason))
	FROM airlock.output_holds h WHERE h.execution_id = exec_id
$$;

-- ---------------------------------------------------------------- what the agent reads

-- 0006's _execution_json, with the hold.
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
		'output_hold', airlock._hold_json(e.id),
		'next_step', airlock._next_step(e)))
$$;

-- What to do now, with the hold first: 0015's _next_step keeps its words
-- for everything else.
ALTER FUNCTION airlock._next_step(airlock.executions) RENAME TO _next_step_unheld;

CREATE FUNCTION airlock._next_step(e airlock.executions) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT CASE h.state
	WHEN 'held' THEN
		format('Finished: %s%s. %s Ask your operator to look at the held output of execution %s and release or discard it (airlock output show %s, then airlock output release %s --reason ... or airlock output discard %s --reason ...). Until then stdout and stderr%s are not shown. Do not read it another way: no raw SSH, no other tool, no second command that prints it in another form; if you need part of it, tell your operator which part and why.',
			e.state, coalesce(', exit code ' || e.exit_code, ''), airlock._hold_message(h),
			e.id, e.id, e.id, e.id, CASE WHEN h.error_held THEN ' and the error' ELSE '' END)
	WHEN 'discarded' THEN
		format('Finished: %s%s. Its output contained %s (line %s of %s) and was discarded by %s: %s. It will not be shown. Do not read it another way; if you need part of it, ask your operator.',
			e.state, coalesce(', exit code ' || e.exit_code, ''), h.label, h.line, h.stream,
			h.decided_by, h.reason)
	WHEN 'released' THEN
		airlock._next_step_unheld(e) || format(' Its output was held (it contains %s) and released by %s: %s.',
			h.label, h.decided_by, h.reason)
	ELSE airlock._next_step_unheld(e)
	END
	FROM (SELECT 1) one LEFT JOIN airlock.output_holds h ON h.execution_id = e.id
$$;

-- ---------------------------------------------------------------- the worker records a hold

-- 0026's worker_finish with a hold: {"kind", "label", "stream", "line",
-- "error_held"} says what the worker's scanner found first.  The output (and
-- the error, when it is held too) goes into output_holds; the request keeps
-- its state, exit code, signal, truncation and duration.  NULL: as before.
CREATE FUNCTION airlock.worker_finish(exec_id bigint, worker text, final_state text,
	exit_code integer, signal integer, stdout bytea, stderr bytea, stdout_truncated boolean,
	stderr_truncated boolean, duration_ms bigint, error text, hold jsonb)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	h airlock.output_holds;
	error_held boolean;
	shown_error text;
BEGIN
	IF hold IS NULL THEN
		RETURN airlock.worker_finish(exec_id, worker, final_state, exit_code, signal, stdout,
			stderr, stdout_truncated, stderr_truncated, duration_ms, error);
	END IF;
	IF final_state NOT IN ('succeeded', 'failed', 'timed_out', 'outcome_unknown') THEN
		RAISE EXCEPTION 'worker_finish: % is not a final state of a run', final_state USING ERRCODE = 'AL002';
	END IF;
	IF jsonb_typeof(hold) IS DISTINCT FROM 'object'
	   OR coalesce(hold ->> 'kind', '') !~ '^[a-z0-9_]{1,64}$'
	   OR octet_length(coalesce(hold ->> 'label', '')) NOT BETWEEN 1 AND 200
	   OR coalesce(hold ->> 'stream', '') NOT IN ('stdout', 'stderr', 'error')
	   OR jsonb_typeof(hold -> 'line') IS DISTINCT FROM 'number' OR (hold ->> 'line')::numeric < 1
	   OR jsonb_typeof(hold -> 'error_held') IS DISTINCT FROM 'boolean' THEN
		RAISE EXCEPTION 'worker_finish: hold must be {"kind": "a_name", "label": "...", "stream": "stdout|stderr|error", "line": N >= 1, "error_held": true|false}, not %', hold
			USING ERRCODE = 'AL002';
	END IF;
	error_held := (hold ->> 'error_held')::boolean;
	shown_error := CASE WHEN error_held THEN
		'the error message is held with the output (see output_hold)' ELSE error END;
	PERFORM set_config('airlock.recorded', exec_id::text, true);
	UPDATE airlock.executions x SET state = final_state, exit_code = worker_finish.exit_code,
		signal = worker_finish.signal, stdout = NULL, stderr = NULL,
		stdout_truncated = worker_finish.stdout_truncated,
		stderr_truncated = worker_finish.stderr_truncated,
		duration_ms = worker_finish.duration_ms, error = shown_error,
		finished_at = now(), claimed_by = NULL
	WHERE x.id = exec_id AND x.state = 'running' AND x.claimed_by = worker
	RETURNING x.* INTO e;
	PERFORM set_config('airlock.recorded', '', true);
	IF e.id IS NULL THEN
		SELECT * INTO e FROM airlock.executions x WHERE x.id = exec_id FOR UPDATE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'execution % not found', exec_id USING ERRCODE = 'AL007';
		END IF;
		-- Not ours any more: nothing is kept, and the event names no byte.
		PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('late_result', final_state,
			'exit_code', exit_code, 'signal', signal, 'duration_ms', duration_ms,
			'error', shown_error, 'worker', worker, 'output_held', hold ->> 'kind'));
		RETURN false;
	END IF;
	INSERT INTO airlock.output_holds AS o (execution_id, kind, label, stream, line, stdout, stderr,
		error, error_held, stdout_sha256, stdout_bytes, stderr_sha256, stderr_bytes, error_sha256)
	VALUES (exec_id, hold ->> 'kind', hold ->> 'label', hold ->> 'stream', (hold ->> 'line')::integer,
		stdout, stderr, CASE WHEN error_held THEN error END, error_held,
		encode(sha256(coalesce(stdout, '')), 'hex'), octet_length(coalesce(stdout, '')),
		encode(sha256(coalesce(stderr, '')), 'hex'), octet_length(coalesce(stderr, '')),
		CASE WHEN error_held THEN encode(sha256(convert_to(coalesce(error, ''), 'UTF8')), 'hex') END)
	RETURNING o.* INTO h;
	INSERT INTO airlock.notifications (execution_id, event) VALUES (exec_id, 'output_held');
	PERFORM airlock._event(exec_id, 'running', final_state, jsonb_build_object('exit_code', exit_code,
		'signal', signal, 'duration_ms', duration_ms, 'stdout_bytes', octet_length(stdout),
		'stderr_bytes', octet_length(stderr), 'stdout_truncated', stdout_truncated,
		'stderr_truncated', stderr_truncated, 'error', shown_error, 'worker', worker,
		'output_hold', airlock._hold_record(h)), e);
	PERFORM pg_advisory_unlock(exec_id);
	RETURN true;
END
$$;

-- ---------------------------------------------------------------- operators decide

-- The hold of exec_id, locked, for a decision; raises when there is none to make.
CREATE FUNCTION airlock._hold_to_decide(exec_id bigint, what text, reason text) RETURNS airlock.output_holds
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	h airlock.output_holds;
BEGIN
	PERFORM airlock._require_approver(what);
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION '%: a reason is required (it is recorded and the requester reads it)', what
			USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(reason) > 1000 THEN
		RAISE EXCEPTION '%: the reason is % bytes; at most 1000', what, octet_length(reason)
			USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO h FROM airlock.output_holds o WHERE o.execution_id = exec_id FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION '%: execution % has no held output (airlock pending lists what is held)', what, exec_id
			USING ERRCODE = 'AL007';
	END IF;
	IF h.state <> 'held' THEN
		RAISE EXCEPTION '%: the output of execution % was already % by % at %: %', what, exec_id,
			h.state, h.decided_by, h.decided_at, h.reason USING ERRCODE = 'AL005';
	END IF;
	RETURN h;
END
$$;

-- Gives the held output to the request: its stdout and stderr (and error,
-- when that was held) become the request's own, readable by its requester.
CREATE FUNCTION airlock.output_release(exec_id bigint, reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	h airlock.output_holds := airlock._hold_to_decide(exec_id, 'output_release', reason);
	e airlock.executions;
BEGIN
	PERFORM set_config('airlock.recorded', exec_id::text, true);
	UPDATE airlock.executions x SET stdout = h.stdout, stderr = h.stderr,
		error = CASE WHEN h.error_held THEN h.error ELSE x.error END
	WHERE x.id = exec_id RETURNING x.* INTO e;
	PERFORM set_config('airlock.recorded', '', true);
	UPDATE airlock.output_holds o SET state = 'released', decided_by = session_user,
		decided_at = now(), reason = output_release.reason, stdout = NULL, stderr = NULL,
		error = NULL
	WHERE o.execution_id = exec_id RETURNING o.* INTO h;
	PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('step', 'output_release',
		'by', session_user, 'reason', reason, 'output_hold', airlock._hold_record(h)), e);
	PERFORM pg_notify('airlock_state', '');
	RETURN 'released';
END
$$;

-- Erases the held output: nobody reads it again; its digests stay.
CREATE FUNCTION airlock.output_discard(exec_id bigint, reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	h airlock.output_holds := airlock._hold_to_decide(exec_id, 'output_discard', reason);
	st text;
BEGIN
	UPDATE airlock.output_holds o SET state = 'discarded', decided_by = session_user,
		decided_at = now(), reason = output_discard.reason, stdout = NULL, stderr = NULL,
		error = NULL
	WHERE o.execution_id = exec_id RETURNING o.* INTO h;
	SELECT state INTO st FROM airlock.executions WHERE id = exec_id;
	PERFORM airlock._event(exec_id, st, st, jsonb_build_object('step', 'output_discard',
		'by', session_user, 'reason', reason, 'output_hold', airlock._hold_record(h)));
	PERFORM pg_notify('airlock_state', '');
	RETURN 'discarded';
END
$$;

-- What waits for an operator besides the held requests.
CREATE VIEW airlock.held_output AS
	SELECT h.execution_id AS id, e.target, e.requested_by, e.command, e.class, e.state,
	       e.exit_code, h.kind, h.label, h.stream, h.line, h.stdout_bytes, h.stderr_bytes,
	       h.error_held, h.held_at, now() - h.held_at AS age
	FROM airlock.output_holds h JOIN airlock.executions e ON e.id = h.execution_id
	WHERE h.state = 'held'
	ORDER BY h.held_at, h.execution_id;

-- ---------------------------------------------------------------- previews

-- A preview's output is the approver's material and no agent reads it; when
-- it carries secret material it is still kept, marked, and shown to an
-- operator only on request.
ALTER TABLE airlock.execution_previews ADD COLUMN hold jsonb;

CREATE FUNCTION airlock.worker_preview(exec_id bigint, p_ord integer, p_command text,
                                       p_exit_code integer, p_stdout text, p_stderr text,
                                       p_truncated boolean, p_error text, p_hold jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	st text;
BEGIN
	IF p_hold IS NULL THEN
		PERFORM airlock.worker_preview(exec_id, p_ord, p_command, p_exit_code, p_stdout,
			p_stderr, p_truncated, p_error);
		RETURN;
	END IF;
	IF jsonb_typeof(p_hold) IS DISTINCT FROM 'object'
	   OR coalesce(p_hold ->> 'kind', '') !~ '^[a-z0-9_]{1,64}$'
	   OR coalesce(p_hold ->> 'stream', '') NOT IN ('stdout', 'stderr', 'error')
	   OR jsonb_typeof(p_hold -> 'line') IS DISTINCT FROM 'number' THEN
		RAISE EXCEPTION 'worker_preview: hold must be {"kind", "label", "stream", "line"}, not %', p_hold
			USING ERRCODE = 'AL002';
	END IF;
	SELECT state INTO st FROM airlock.executions WHERE id = exec_id;
	IF st IS NULL THEN
		RAISE EXCEPTION 'worker_preview: no execution %', exec_id USING ERRCODE = 'AL001';
	END IF;
	IF p_ord IS NULL OR p_ord < 1 OR p_ord > 16 THEN
		RAISE EXCEPTION 'worker_preview: ord must be 1..16' USING ERRCODE = 'AL002';
	END IF;
	INSERT INTO airlock.execution_previews AS p
		(execution_id, ord, command, exit_code, stdout, stderr, truncated, error, hold)
	VALUES (exec_id, p_ord, p_command, p_exit_code, p_stdout, p_stderr,
	        coalesce(p_truncated, false), p_error, p_hold)
	ON CONFLICT ON CONSTRAINT execution_previews_pkey DO UPDATE
	SET command = EXCLUDED.command, exit_code = EXCLUDED.exit_code, stdout = EXCLUDED.stdout,
	    stderr = EXCLUDED.stderr, truncated = EXCLUDED.truncated, error = EXCLUDED.error,
	    hold = EXCLUDED.hold, created_at = clock_timestamp();
	PERFORM airlock._event(exec_id, st, st, jsonb_build_object(
		'step', 'preview', 'ord', p_ord, 'command', p_command, 'exit_code', p_exit_code,
		'error', p_error, 'truncated', coalesce(p_truncated, false),
		'stdout_sha256', encode(sha256(convert_to(coalesce(p_stdout, ''), 'UTF8')), 'hex'),
		'stderr_sha256', encode(sha256(convert_to(coalesce(p_stderr, ''), 'UTF8')), 'hex'),
		'output_hold', p_hold - 'label'));
END
$$;

-- ---------------------------------------------------------------- notifications

ALTER TABLE airlock.notifications DROP CONSTRAINT notifications_event_check;
ALTER TABLE airlock.notifications ADD CONSTRAINT notifications_event_check CHECK (event IN (
	'pending_approval', 'approved', 'rejected', 'expired', 'cancelled',
	'refused', 'succeeded', 'failed', 'timed_out', 'outcome_unknown',
	'reminder', 'escalation', 'output_held'));

-- As in 0014, with the hold's sentence for an output_held notification
-- (never a byte of the output).
DROP FUNCTION airlock.notify_due(text[], integer, integer);
CREATE FUNCTION airlock.notify_due(hooks text[], lim integer, lease_s integer)
RETURNS TABLE (delivery_id bigint, hook text, attempt integer, notification_id bigint,
               event text, event_at timestamptz, execution_id bigint, target text,
               command text, class text, reasons text, requested_by text, state text,
               rewind_status text, error text, exit_code integer, decided_by text,
               decision_reason text, pending_since timestamptz, expires_at timestamptz,
               output_hold text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	RETURN QUERY
	WITH due AS (
		SELECT d.id FROM airlock.notification_deliveries d
		WHERE d.state = 'pending' AND d.next_attempt_at <= clock_timestamp()
		  AND d.hook = ANY (hooks)
		ORDER BY d.next_attempt_at, d.id LIMIT greatest(lim, 1) FOR UPDATE SKIP LOCKED
	), took AS (
		UPDATE airlock.notification_deliveries d
		SET attempts = d.attempts + 1,
		    next_attempt_at = clock_timestamp() + make_interval(secs => greatest(lease_s, 1))
		FROM due WHERE d.id = due.id
		RETURNING d.id, d.hook, d.attempts, d.notification_id
	)
	SELECT t.id, t.hook, t.attempts, n.id, n.event, n.created_at, e.id, e.target, e.command,
	       e.class,
	       (SELECT string_agg(coalesce(r->>'rule', '') || ': ' || coalesce(r->>'words', '')
	                          || ' (' || coalesce(r->>'class', '') || ')', '; ')
	        FROM jsonb_array_elements(CASE jsonb_typeof(e.reasons) WHEN 'array' THEN e.reasons
	                                  ELSE '[]'::jsonb END) r
	        WHERE r ? 'rule'),
	       e.requested_by, e.state, e.rewind_status, e.error, e.exit_code,
	       a.approver, a.reason,
	       (SELECT max(p.created_at) FROM airlock.notifications p
	        WHERE p.execution_id = e.id AND p.event = 'pending_approval'),
	       e.expires_at,
	       CASE WHEN n.event = 'output_held' THEN airlock._hold_message(h) END
	FROM took t
	JOIN airlock.notifications n ON n.id = t.notification_id
	JOIN airlock.executions e ON e.id = n.execution_id
	LEFT JOIN airlock.output_holds h ON h.execution_id = e.id
	LEFT JOIN LATERAL (SELECT ap.approver, ap.reason FROM airlock.approvals ap
	                   WHERE ap.execution_id = e.id ORDER BY ap.at DESC, ap.id DESC LIMIT 1) a
	       ON n.event IN ('approved', 'rejected')
	ORDER BY t.id;
END
$$;

-- ---------------------------------------------------------------- verification

-- As in 0026, and every hold against its latest record (the event of the
-- finish that held it, or of the decision that followed).
CREATE OR REPLACE FUNCTION airlock._audit_records(OUT event_id bigint, OUT problem text)
RETURNS SETOF record LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	WITH arec AS (
		SELECT DISTINCT ON ((ev.detail -> 'approval' ->> 'id')::bigint)
		       (ev.detail -> 'approval' ->> 'id')::bigint AS approval_id, ev.id, ev.detail -> 'approval' AS r,
		       ev.actor, coalesce((ev.detail ->> 'backfill')::boolean, false) AS backfill
		FROM airlock.execution_events ev
		WHERE ev.from_state = 'record' AND ev.detail ->> 'record' = 'approval'
		ORDER BY (ev.detail -> 'approval' ->> 'id')::bigint, ev.id DESC),
	erec AS (
		SELECT DISTINCT ON (ev.execution_id) ev.execution_id, ev.id, ev.detail -> 'execution' AS r
		FROM airlock.execution_events ev
		WHERE ev.detail ->> 'record' = 'execution'
		ORDER BY ev.execution_id, ev.id DESC),
	hrec AS (
		SELECT DISTINCT ON (ev.execution_id) ev.execution_id, ev.id, ev.detail -> 'output_hold' AS r
		FROM airlock.execution_events ev
		WHERE jsonb_typeof(ev.detail -> 'output_hold') = 'object'
		  AND ev.detail ->> 'step' IS DISTINCT FROM 'preview'
		ORDER BY ev.execution_id, ev.id DESC)
	SELECT * FROM (
		SELECT coalesce(arec.id, 0),
		       CASE WHEN arec.id IS NULL THEN format(
				'approval %s of execution %s (%s by %s) has no chained record: it was written around the triggers',
				a.id, a.execution_id, a.decision, a.approver)
			WHEN a.id IS NULL THEN format(
				'event %s records approval %s of execution %s (%s by %s), and that approval is gone',
				arec.id, arec.approval_id, arec.r ->> 'execution_id', arec.r ->> 'decision', arec.r ->> 'approver')
			WHEN airlock._approval_record(a) <> arec.r THEN format(
				'approval %s of execution %s differs from its record (event %s): the row says %s, the record says %s',
				a.id, a.execution_id, arec.id, airlock._approval_record(a), arec.r)
			ELSE format('approval %s of execution %s says %s decided, but its record (event %s) was written by %s',
				a.id, a.execution_id, a.approver, arec.id, arec.actor) END
		FROM airlock.approvals a FULL JOIN arec ON arec.approval_id = a.id
		WHERE arec.id IS NULL OR a.id IS NULL OR airlock._approval_record(a) <> arec.r
		   OR (arec.actor <> a.approver AND NOT arec.backfill)
		UNION ALL
		SELECT coalesce(erec.id, 0),
		       CASE WHEN erec.id IS NULL THEN format(
				'execution %s has no chained record: it was written around the triggers', e.id)
			ELSE format('execution %s differs from its record (event %s): the row says %s, the record says %s',
				e.id, erec.id, airlock._execution_record(e), erec.r) END
		FROM airlock.executions e LEFT JOIN erec ON erec.execution_id = e.id
		WHERE erec.id IS NULL OR airlock._execution_record(e) <> erec.r
		UNION ALL
		SELECT coalesce(hrec.id, 0),
		       CASE WHEN hrec.id IS NULL THEN format(
				'the output hold of execution %s has no chained record: it was written around the functions', h.execution_id)
			WHEN h.execution_id IS NULL THEN format(
				'event %s records an output hold of execution %s, and that hold is gone', hrec.id, hrec.execution_id)
			ELSE format('the output hold of execution %s differs from its record (event %s): the row says %s, the record says %s',
				h.execution_id, hrec.id, airlock._hold_record(h), hrec.r) END
		FROM airlock.output_holds h FULL JOIN hrec ON hrec.execution_id = h.execution_id
		WHERE hrec.id IS NULL OR h.execution_id IS NULL OR airlock._hold_record(h) <> hrec.r
		   OR encode(sha256(coalesce(h.stdout, '')), 'hex') <> h.stdout_sha256 AND h.state = 'held'
		   OR encode(sha256(coalesce(h.stderr, '')), 'hex') <> h.stderr_sha256 AND h.state = 'held') p
	ORDER BY 1
$$;

-- ---------------------------------------------------------------- ownership and grants

SELECT airlock._secure_new_objects();

GRANT SELECT ON airlock.output_holds, airlock.held_output TO airlock_operator;
-- The worker reads what a hold is about, never its bytes.
GRANT SELECT (execution_id, state, kind, label, stream, line, stdout_bytes, stderr_bytes,
	error_held, held_at, decided_by, decided_at) ON airlock.output_holds TO airlock_worker;
GRANT EXECUTE ON FUNCTION airlock.output_release(bigint, text), airlock.output_discard(bigint, text)
TO airlock_operator;
GRANT EXECUTE ON FUNCTION
	airlock.worker_finish(bigint, text, text, integer, integer, bytea, bytea, boolean, boolean,
		bigint, text, jsonb),
	airlock.worker_preview(bigint, integer, text, integer, text, text, boolean, text, jsonb),
	airlock.notify_due(text[], integer, integer)
TO airlock_worker;
