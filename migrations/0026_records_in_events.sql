-- 0026_records_in_events.sql -- a request's record rides in the transition
-- event of the call that changed it.
--
-- Every change of a request writes a record of the whole row (0005, 0011),
-- and until now always as an event of its own: a read-only execution wrote
-- three records beside its four transitions, and each was inserted, indexed
-- and sealed like any other event.  run(), the worker's claim and its finish
-- now put the record into the transition event they write anyway, so the
-- same execution writes four events instead of seven.  What a record holds,
-- and the rule that checks it (every request equals its latest record), are
-- unchanged; only where a record may sit is wider: any event whose detail
-- says "record": "execution" carries one, not only a 'record' -> 'record'
-- event.
--
-- The triggers still write a record for every other change, made by any
-- function or by hand.  A call that folds the record names its request in
-- the transaction-local setting airlock.recorded for the one INSERT or
-- UPDATE it records itself, and clears it right after.  Setting it anywhere
-- else only leaves a change without a record, which verification reports
-- as a request that differs from (or has no) latest record.

-- ---------------------------------------------------------------- where a record sits

-- A transition's detail never carries the key "record" by accident: _event
-- drops it from every event but a record, so no caller-supplied detail
-- (a worker's note, a refusal's detail) can pass for one.  Given `rec`,
-- the row as its caller's write left it, the event carries that row's
-- record beside its own detail.  The signature gains that argument, so the
-- old function is replaced, not overloaded: a call with four arguments
-- reads as before.
DROP FUNCTION airlock._event(bigint, text, text, jsonb);
CREATE FUNCTION airlock._event(exec_id bigint, from_state text, to_state text, detail jsonb,
	rec airlock.executions DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	INSERT INTO airlock.execution_events (execution_id, actor, from_state, to_state, detail)
	VALUES (exec_id, session_user, from_state, to_state,
		CASE WHEN from_state = 'record' THEN coalesce(detail, '{}')
		     WHEN rec.id IS NULL THEN coalesce(detail, '{}') - 'record'
		     ELSE (coalesce(detail, '{}') - 'record') || jsonb_build_object('record', 'execution',
			'execution', airlock._execution_record(rec)) END);
	IF from_state IS DISTINCT FROM to_state THEN
		PERFORM pg_notify('airlock_state', '');
	END IF;
END
$$;

-- ---------------------------------------------------------------- the trigger steps aside once

DROP TRIGGER executions_record_update ON airlock.executions;
CREATE TRIGGER executions_record_update AFTER UPDATE ON airlock.executions
	FOR EACH ROW WHEN (current_setting('airlock.recorded', true) IS DISTINCT FROM NEW.id::text)
	EXECUTE FUNCTION airlock._record_execution();

-- ---------------------------------------------------------------- the request

-- As in 0004, with the new request's record in its 'received' event.  The
-- id is taken from the sequence first, so that the insert's trigger knows
-- the row it steps aside for.
DROP TRIGGER executions_record_insert ON airlock.executions;
CREATE TRIGGER executions_record_insert AFTER INSERT ON airlock.executions
	FOR EACH ROW WHEN (current_setting('airlock.recorded', true) IS DISTINCT FROM NEW.id::text)
	EXECUTE FUNCTION airlock._record_execution();

CREATE OR REPLACE FUNCTION airlock.run(target text, command text, declared_risk text DEFAULT NULL,
			    change_id text DEFAULT NULL, action text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ent airlock.entities;
	pf record;
	lim airlock.gate_limits;
	me text := session_user; -- text, so the requester indexes serve the counts
	n bigint;
	new_id bigint;
	rec airlock.executions;
BEGIN
	IF target IS NULL OR btrim(target) = '' THEN
		RAISE EXCEPTION 'run: target is required (an entity slug such as proxmox-host:hubris or vm:zimaos)'
			USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO ent FROM airlock.entities WHERE slug = target;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'run on %: unknown target. Use an entity slug from the inventory (get_health_summary lists them) or ask your operator to add it.', target
			USING ERRCODE = 'AL001';
	END IF;
	IF command IS NULL OR btrim(command, E' \t\r\n') = '' THEN
		RAISE EXCEPTION 'run on %: command is empty', target USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(command) > 65536 THEN
		RAISE EXCEPTION 'run on %: command is % bytes; the limit is 65536 (64 KiB)', target, octet_length(command)
			USING ERRCODE = 'AL002';
	END IF;
	IF airlock._quoted_length(command) > 32640 THEN
		RAISE EXCEPTION 'run on %: command is too long to carry: % bytes once quoted for the remote shell (each single quote counts 4 bytes); the limit is 32640. Shorten it, or put it in a script on the target and run that.',
			target, airlock._quoted_length(command) USING ERRCODE = 'AL002';
	END IF;
	IF declared_risk IS NOT NULL AND declared_risk NOT IN ('read_only', 'reversible_low', 'config_mutation', 'destructive') THEN
		RAISE EXCEPTION 'run on %: declared_risk "%" is not one of read_only, reversible_low, config_mutation, destructive', target, declared_risk
			USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(change_id) > 200 THEN
		RAISE EXCEPTION 'run on %: change_id is longer than 200 bytes', target USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(action) > 500 THEN
		RAISE EXCEPTION 'run on %: action is longer than 500 bytes', target USING ERRCODE = 'AL002';
	END IF;

	-- Pre-flight: a request that can never run must not wait for anyone.
	pf := airlock._preflight_problem(ent);
	IF pf.sqlstate IS NOT NULL THEN
		RAISE EXCEPTION '%', pf.message USING ERRCODE = pf.sqlstate;
	END IF;

	-- Flood limits, counted under a per-requester lock so that concurrent
	-- calls cannot all slip under them.
	IF airlock._limits_apply() THEN
		lim := airlock._limits();
		PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
		-- Each count stops at the limit: its cost is bounded by the limit,
		-- not by the requester's history.
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.executions x
			WHERE x.requested_by = me AND x.created_at > now() - interval '1 minute'
			LIMIT lim.requests_per_minute) c;
		IF n >= lim.requests_per_minute THEN
			RAISE EXCEPTION 'run on %: % already made % requests in the last minute; the gate policy allows % per minute (requests_per_minute). Nothing was queued: wait, then send fewer, larger requests.',
				target, session_user, n, lim.requests_per_minute USING ERRCODE = 'AL010';
		END IF;
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.executions x
			WHERE x.requested_by = me
			  AND x.state IN ('received', 'queued', 'pending_approval', 'approved')
			LIMIT lim.pending_per_agent) c;
		IF n >= lim.pending_per_agent THEN
			RAISE EXCEPTION 'run on %: % already has % requests waiting to run or to be decided; the gate policy allows % (pending_per_agent). Nothing was queued: wait for them to finish, or cancel some.',
				target, session_user, n, lim.pending_per_agent USING ERRCODE = 'AL010';
		END IF;
	END IF;

	new_id := nextval('airlock.executions_id_seq');
	PERFORM set_config('airlock.recorded', new_id::text, true);
	INSERT INTO airlock.executions (id, target, target_type, command, declared_risk, change_id, action,
		requested_by)
	VALUES (new_id, ent.slug, ent.type, command, declared_risk, nullif(change_id, ''), nullif(action, ''),
		session_user)
	RETURNING * INTO rec;
	PERFORM set_config('airlock.recorded', '', true);
	PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
		'declared_risk', declared_risk, 'change_id', change_id, 'action', action), rec);
	PERFORM pg_notify('airlock_work', '');
	RETURN new_id;
END
$$;

-- ---------------------------------------------------------------- the claim

-- As in 0024.  When the row goes on to run, or waits queued, the last of the
-- claim's events carries the record.  A row held for approval is changed
-- again by _hold_for_approval, so its records are written as before.
CREATE OR REPLACE FUNCTION airlock.worker_claim_classified(worker text, exec_id bigint, seen jsonb,
	cls text, reasons jsonb, p_policy_version bigint, classifier_version text,
	rewind_status text, p_rewind_possible boolean, confinement text)
RETURNS TABLE (id bigint, state text, target text, target_type text, command text,
	       declared_risk text, change_id text, action text, requested_by text, class text,
	       policy_version bigint, rewind_possible boolean, attempts integer, vmid integer,
	       node text, address text, port integer, ssh_user text, host_key_fingerprint text,
	       zerto_vm_identifier text, kind text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	rec airlock.executions;
	final text;
	new_state text;
	go boolean;
	folded boolean;
BEGIN
	IF worker IS NULL OR btrim(worker) = '' THEN
		RAISE EXCEPTION 'worker_claim_classified: a worker id is required' USING ERRCODE = 'AL002';
	END IF;
	IF airlock._class_rank(cls) IS NULL THEN
		RAISE EXCEPTION 'worker_claim_classified: unknown class %', cls USING ERRCODE = 'AL002';
	END IF;
	IF confinement IS NOT NULL AND confinement NOT IN ('none', 'user', 'root') THEN
		RAISE EXCEPTION 'worker_claim_classified: confinement "%" is not none, user or root', confinement
			USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO e FROM airlock.executions x
	WHERE x.id = exec_id AND x.state = 'received' AND x.kind = 'run' AND x.claimed_by IS NULL
	  AND x.run_after <= now()
	FOR UPDATE SKIP LOCKED;
	IF NOT FOUND OR seen IS NULL OR seen IS DISTINCT FROM airlock._wake_doc(e) THEN
		RETURN;
	END IF;
	final := CASE WHEN airlock._class_rank(e.declared_risk) > airlock._class_rank(cls)
		      THEN e.declared_risk ELSE cls END;
	new_state := CASE WHEN airlock._class_rank(final) <= 1 THEN 'queued' ELSE 'pending_approval' END;
	go := confinement IS NOT NULL AND final = 'read_only';
	IF go AND confinement = 'none' THEN
		RAISE EXCEPTION 'execution %: an observation that no human approved runs in the jail', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	folded := new_state <> 'pending_approval';
	PERFORM pg_advisory_lock(exec_id);
	IF folded THEN
		PERFORM set_config('airlock.recorded', exec_id::text, true);
	END IF;
	UPDATE airlock.executions x SET claimed_by = worker, lease_until = NULL, class = final,
		reasons = worker_claim_classified.reasons,
		policy_version = p_policy_version,
		classifier_version = worker_claim_classified.classifier_version,
		rewind_status = worker_claim_classified.rewind_status,
		rewind_possible = p_rewind_possible,
		payload_hash = airlock._payload_hash(e.target, e.command, final, p_policy_version),
		classified_at = now(),
		state = CASE WHEN go THEN 'running' ELSE new_state END,
		started_at = CASE WHEN go THEN now() ELSE x.started_at END,
		confinement = CASE WHEN go THEN worker_claim_classified.confinement ELSE x.confinement END
	WHERE x.id = exec_id
	RETURNING x.* INTO rec;
	IF folded THEN
		PERFORM set_config('airlock.recorded', '', true);
	ELSE
		PERFORM airlock._hold_for_approval(exec_id, final);
	END IF;
	-- Both events in one statement, in this order (ids, so chain positions,
	-- follow it), with the one notification _event would send for each; the
	-- last of them carries the record when the trigger did not write it.
	INSERT INTO airlock.execution_events (execution_id, actor, from_state, to_state, detail)
	SELECT exec_id, session_user, v.from_state, v.to_state,
	       CASE WHEN folded AND v.n = CASE WHEN go THEN 2 ELSE 1 END
		    THEN v.detail || jsonb_build_object('record', 'execution',
			'execution', airlock._execution_record(rec))
		    ELSE v.detail END
	FROM (VALUES (1, 'received', new_state, jsonb_build_object('class', final,
			'classified', cls, 'declared_risk', e.declared_risk, 'reasons', reasons,
			'policy_version', p_policy_version, 'classifier_version', classifier_version,
			'rewind_status', rewind_status, 'worker', worker)),
		     (2, 'queued', 'running', jsonb_build_object('worker', worker,
			'rewind_points', NULL, 'guard', NULL, 'confinement', confinement)))
	     AS v(n, from_state, to_state, detail)
	WHERE v.n = 1 OR go
	ORDER BY v.n;
	PERFORM pg_notify('airlock_state', '');
	RETURN QUERY
		SELECT x.id, x.state, x.target, x.target_type, x.command, x.declared_risk, x.change_id,
		       x.action, x.requested_by, x.class, x.policy_version, x.rewind_possible, x.attempts,
		       t.vmid, h.slug, h.address, h.port, h.ssh_user, h.host_key_fingerprint,
		       t.zerto_vm_identifier, x.kind
		FROM airlock.executions x
		JOIN airlock.entities t ON t.slug = x.target
		JOIN airlock.entities h ON h.slug = coalesce(t.node, t.slug)
		WHERE x.id = exec_id;
END
$$;

-- ---------------------------------------------------------------- the finish

-- As in 0024, with the record in the finish's own event.
CREATE OR REPLACE FUNCTION airlock.worker_finish(exec_id bigint, worker text, final_state text,
	exit_code integer, signal integer, stdout bytea, stderr bytea, stdout_truncated boolean,
	stderr_truncated boolean, duration_ms bigint, error text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	IF final_state NOT IN ('succeeded', 'failed', 'timed_out', 'outcome_unknown') THEN
		RAISE EXCEPTION 'worker_finish: % is not a final state of a run', final_state USING ERRCODE = 'AL002';
	END IF;
	PERFORM set_config('airlock.recorded', exec_id::text, true);
	UPDATE airlock.executions x SET state = final_state, exit_code = worker_finish.exit_code,
		signal = worker_finish.signal, stdout = worker_finish.stdout, stderr = worker_finish.stderr,
		stdout_truncated = worker_finish.stdout_truncated,
		stderr_truncated = worker_finish.stderr_truncated,
		duration_ms = worker_finish.duration_ms, error = worker_finish.error,
		finished_at = now(), claimed_by = NULL
	WHERE x.id = exec_id AND x.state = 'running' AND x.claimed_by = worker
	RETURNING x.* INTO e;
	PERFORM set_config('airlock.recorded', '', true);
	IF e.id IS NULL THEN
		SELECT * INTO e FROM airlock.executions x WHERE x.id = exec_id FOR UPDATE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'execution % not found', exec_id USING ERRCODE = 'AL007';
		END IF;
		PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('late_result', final_state,
			'exit_code', exit_code, 'signal', signal, 'duration_ms', duration_ms, 'error', error,
			'worker', worker));
		RETURN false;
	END IF;
	PERFORM airlock._event(exec_id, 'running', final_state, jsonb_build_object('exit_code', exit_code,
		'signal', signal, 'duration_ms', duration_ms, 'stdout_bytes', octet_length(stdout),
		'stderr_bytes', octet_length(stderr), 'stdout_truncated', stdout_truncated,
		'stderr_truncated', stderr_truncated, 'error', error, 'worker', worker), e);
	PERFORM pg_advisory_unlock(exec_id);
	RETURN true;
END
$$;

-- ---------------------------------------------------------------- verification

-- As in 0005, with a request's records found wherever they sit.
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
		WHERE erec.id IS NULL OR airlock._execution_record(e) <> erec.r) p
	ORDER BY 1
$$;

-- ---------------------------------------------------------------- history

-- What an operator reads is unchanged: a transition shows its own detail,
-- and a record it carries is shown as the record line it used to be, under
-- the same event id, after the transition.
CREATE OR REPLACE VIEW airlock.history AS
	SELECT ev.execution_id, ev.id AS event_id, ev.at, ev.actor, ev.from_state, ev.to_state,
	       CASE WHEN ev.from_state IS DISTINCT FROM 'record' AND ev.detail ? 'record'
		    THEN ev.detail - 'record' - 'execution' ELSE ev.detail END AS detail
	FROM airlock.execution_events ev
	UNION ALL
	SELECT ev.execution_id, ev.id, ev.at, ev.actor, 'record', 'record',
	       jsonb_build_object('record', 'execution', 'execution', ev.detail -> 'execution')
	FROM airlock.execution_events ev
	WHERE ev.from_state IS DISTINCT FROM 'record' AND ev.detail ->> 'record' = 'execution';

SELECT airlock._secure_new_objects();
