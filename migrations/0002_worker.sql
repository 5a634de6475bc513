-- 0002_worker.sql -- the worker's side of the queue (airlockd).
--
-- Liveness is a session advisory lock per execution, taken in the same
-- transaction as the claim and held by the claiming connection until the row
-- is released or final: when a worker dies its sessions end, the locks vanish
-- at once, and worker_reap() settles the row.  No global timeout.
--
-- The worker never holds a transaction open across an SSH command: each of
-- these functions is one short autocommit statement.

-- Claims the next row to advance (received: classify; queued/approved:
-- execute), oldest first.  Returns nothing when there is no work.
CREATE FUNCTION airlock.worker_claim(worker text)
RETURNS TABLE (id bigint, state text, target text, target_type text, command text,
	       declared_risk text, change_id text, action text, requested_by text, class text,
	       policy_version bigint, rewind_possible boolean, attempts integer, vmid integer,
	       node text, address text, port integer, ssh_user text, host_key_fingerprint text,
	       zerto_vm_identifier text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	cid bigint;
BEGIN
	WITH c AS (
		SELECT e.id FROM airlock.executions e
		WHERE e.state IN ('received', 'queued', 'approved') AND e.claimed_by IS NULL
		  AND e.run_after <= now()
		ORDER BY e.run_after, e.id
		LIMIT 1
		FOR UPDATE SKIP LOCKED)
	UPDATE airlock.executions e SET claimed_by = worker, attempts = e.attempts + 1,
		lease_until = NULL
	FROM c WHERE e.id = c.id
	RETURNING e.id INTO cid;
	IF cid IS NULL THEN
		RETURN;
	END IF;
	PERFORM pg_advisory_lock(cid);
	RETURN QUERY
		SELECT e.id, e.state, e.target, e.target_type, e.command, e.declared_risk, e.change_id,
		       e.action, e.requested_by, e.class, e.policy_version, e.rewind_possible, e.attempts,
		       t.vmid, h.slug, h.address, h.port, h.ssh_user, h.host_key_fingerprint,
		       t.zerto_vm_identifier
		FROM airlock.executions e
		JOIN airlock.entities t ON t.slug = e.target
		JOIN airlock.entities h ON h.slug = coalesce(t.node, t.slug)
		WHERE e.id = cid;
END
$$;

-- Checks the caller holds the row; raises AL005 otherwise.
CREATE FUNCTION airlock._held(exec_id bigint, worker text, states text[]) RETURNS airlock.executions
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	SELECT * INTO e FROM airlock.executions WHERE id = exec_id FOR UPDATE;
	IF NOT FOUND OR e.claimed_by IS DISTINCT FROM worker OR NOT (e.state = ANY (states)) THEN
		RAISE EXCEPTION 'execution % is not held by worker % in state %', exec_id, worker, states
			USING ERRCODE = 'AL005';
	END IF;
	RETURN e;
END
$$;

CREATE FUNCTION airlock._class_rank(c text) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE c WHEN 'read_only' THEN 0 WHEN 'reversible_low' THEN 1
		      WHEN 'config_mutation' THEN 2 WHEN 'destructive' THEN 3 END
$$;

CREATE FUNCTION airlock._payload_hash(target text, command text, class text, policy_version bigint)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT encode(sha256(convert_to(target || E'\n' || class || E'\n' || policy_version || E'\n'
		|| command, 'UTF8')), 'hex')
$$;

-- Gives the row back unfinished: the claim and the lock are released and it
-- may be claimed again after delay_ms.  reason, when given, is recorded.
CREATE FUNCTION airlock.worker_release(exec_id bigint, worker text, delay_ms integer, reason text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received', 'queued', 'approved']);
	UPDATE airlock.executions SET claimed_by = NULL,
		run_after = now() + make_interval(secs => greatest(delay_ms, 0) / 1000.0)
	WHERE id = exec_id;
	IF reason IS NOT NULL THEN
		PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('released', reason,
			'worker', worker, 'retry_in_ms', delay_ms));
	END IF;
	PERFORM pg_advisory_unlock(exec_id);
	PERFORM pg_notify('airlock_work', exec_id::text);
END
$$;

-- Sets what pending_approval needs: quorum, expiry, payload hash.
CREATE FUNCTION airlock._hold_for_approval(exec_id bigint, cls text) RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	g airlock.gate_policy;
BEGIN
	SELECT * INTO g FROM airlock.gate_policy WHERE class = cls;
	UPDATE airlock.executions SET state = 'pending_approval', claimed_by = NULL,
		approvals_required = coalesce(g.approvals_required, 1),
		expires_at = now() + coalesce(g.ttl, interval '1 hour')
	WHERE id = exec_id;
	PERFORM pg_advisory_unlock(exec_id);
	PERFORM pg_notify('airlock_pending', exec_id::text);
END
$$;

-- Records the classification of a received row.  read_only and
-- reversible_low go to queued (the worker keeps the row and executes it);
-- config_mutation and destructive go to pending_approval (released).
-- The declared risk can only raise the class, here as in the classifier.
CREATE FUNCTION airlock.worker_classified(exec_id bigint, worker text, cls text, reasons jsonb,
	policy_version bigint, classifier_version text, rewind_status text, rewind_possible boolean)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	final text;
	new_state text;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received']);
	IF airlock._class_rank(cls) IS NULL THEN
		RAISE EXCEPTION 'worker_classified: unknown class %', cls USING ERRCODE = 'AL002';
	END IF;
	final := CASE WHEN airlock._class_rank(e.declared_risk) > airlock._class_rank(cls)
		      THEN e.declared_risk ELSE cls END;
	new_state := CASE WHEN airlock._class_rank(final) <= 1 THEN 'queued' ELSE 'pending_approval' END;
	UPDATE airlock.executions x SET class = final, reasons = worker_classified.reasons,
		policy_version = worker_classified.policy_version,
		classifier_version = worker_classified.classifier_version,
		rewind_status = worker_classified.rewind_status,
		rewind_possible = worker_classified.rewind_possible,
		payload_hash = airlock._payload_hash(e.target, e.command, final, worker_classified.policy_version),
		classified_at = now(), state = new_state
	WHERE x.id = exec_id;
	IF new_state = 'pending_approval' THEN
		PERFORM airlock._hold_for_approval(exec_id, final);
	END IF;
	PERFORM airlock._event(exec_id, 'received', new_state, jsonb_build_object('class', final,
		'classified', cls, 'declared_risk', e.declared_risk, 'reasons', reasons,
		'policy_version', policy_version, 'classifier_version', classifier_version,
		'rewind_status', rewind_status, 'worker', worker));
	RETURN new_state;
END
$$;

-- Re-validation right before executing a queued or approved row, with the
-- classification under the policy now in force.  Returns the row's state:
-- unchanged when it may go on; 'pending_approval' when the class rose above
-- what was approved (or above what needs no approval), or when the recorded
-- approvals no longer match the payload: the approval is void and the row
-- waits for a human again, with an event saying why.
CREATE FUNCTION airlock.worker_revalidate(exec_id bigint, worker text, cls text, reasons jsonb,
	policy_version bigint, classifier_version text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	final text;
	votes integer;
	why text;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
	final := CASE WHEN airlock._class_rank(e.declared_risk) > airlock._class_rank(cls)
		      THEN e.declared_risk ELSE cls END;
	IF e.state = 'approved' THEN
		SELECT count(*) INTO votes FROM airlock.approvals a
		WHERE a.execution_id = exec_id AND a.decision = 'approve' AND a.payload_hash = e.payload_hash;
		IF e.payload_hash IS DISTINCT FROM airlock._payload_hash(e.target, e.command, e.class, e.policy_version) THEN
			why := 'the row no longer matches the payload that was approved';
		ELSIF votes < greatest(e.approvals_required, 1) THEN
			why := format('only %s of %s approvals match the payload', votes, e.approvals_required);
		END IF;
	END IF;
	IF why IS NULL AND airlock._class_rank(final) > airlock._class_rank(e.class)
	   AND (e.state = 'approved' OR airlock._class_rank(final) >= 2) THEN
		why := format('class rose from %s to %s under policy version %s', e.class, final, policy_version);
	END IF;
	IF why IS NULL THEN
		RETURN e.state;
	END IF;
	IF airlock._class_rank(final) < airlock._class_rank(e.class) THEN
		final := e.class; -- never lower a class on re-validation
	END IF;
	UPDATE airlock.executions x SET class = final, reasons = worker_revalidate.reasons,
		policy_version = worker_revalidate.policy_version,
		classifier_version = worker_revalidate.classifier_version,
		payload_hash = airlock._payload_hash(e.target, e.command, final, worker_revalidate.policy_version),
		classified_at = now(), decided_at = NULL
	WHERE x.id = exec_id;
	PERFORM airlock._hold_for_approval(exec_id, final);
	PERFORM airlock._event(exec_id, e.state, 'pending_approval', jsonb_build_object(
		'approval_void', e.state = 'approved', 'why', why, 'class', final, 'reasons', reasons,
		'policy_version', policy_version, 'worker', worker));
	RETURN 'pending_approval';
END
$$;

-- Nothing ran: the transport is dead, the guard failed, the target is gone.
-- reason is what the agent reads (next_step) and must say what to do.
CREATE FUNCTION airlock.worker_refuse(exec_id bigint, worker text, reason text, detail jsonb DEFAULT '{}')
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received', 'queued', 'approved']);
	UPDATE airlock.executions SET state = 'refused', error = reason, finished_at = now(),
		claimed_by = NULL
	WHERE id = exec_id;
	PERFORM airlock._event(exec_id, e.state, 'refused', coalesce(detail, '{}') ||
		jsonb_build_object('reason', reason, 'worker', worker));
	PERFORM pg_advisory_unlock(exec_id);
END
$$;

-- Records a step that does not change the state (guard steps, probes).
CREATE FUNCTION airlock.worker_note(exec_id bigint, worker text, detail jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved', 'running']);
	PERFORM airlock._event(exec_id, e.state, e.state, coalesce(detail, '{}') || jsonb_build_object('worker', worker));
END
$$;

-- The command is about to be sent.  Committed before the first byte goes
-- out, so a crash after this point is an unknown outcome, never a retry.
-- For an approved row the approvals are checked against the payload once
-- more, in this transaction.
CREATE FUNCTION airlock.worker_start(exec_id bigint, worker text, rewind_points jsonb, guard jsonb)
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
		'rewind_points', rewind_points, 'guard', guard));
END
$$;

-- The result of a running row.  Returns false, recording the result as an
-- event only, when the row is no longer this worker's (a reaper declared it
-- outcome_unknown while this worker had lost its database session).
CREATE FUNCTION airlock.worker_finish(exec_id bigint, worker text, final_state text,
	exit_code integer, signal integer, stdout bytea, stderr bytea, stdout_truncated boolean,
	stderr_truncated boolean, duration_ms bigint, error text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	IF final_state NOT IN ('succeeded', 'failed', 'timed_out', 'outcome_unknown') THEN
		RAISE EXCEPTION 'worker_finish: % is not a final state of a run', final_state USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO e FROM airlock.executions x WHERE x.id = exec_id FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'execution % not found', exec_id USING ERRCODE = 'AL007';
	END IF;
	IF e.state <> 'running' OR e.claimed_by IS DISTINCT FROM worker THEN
		PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('late_result', final_state,
			'exit_code', exit_code, 'signal', signal, 'duration_ms', duration_ms, 'error', error,
			'worker', worker));
		RETURN false;
	END IF;
	UPDATE airlock.executions x SET state = final_state, exit_code = worker_finish.exit_code,
		signal = worker_finish.signal, stdout = worker_finish.stdout, stderr = worker_finish.stderr,
		stdout_truncated = worker_finish.stdout_truncated,
		stderr_truncated = worker_finish.stderr_truncated,
		duration_ms = worker_finish.duration_ms, error = worker_finish.error,
		finished_at = now(), claimed_by = NULL
	WHERE x.id = exec_id;
	PERFORM airlock._event(exec_id, 'running', final_state, jsonb_build_object('exit_code', exit_code,
		'signal', signal, 'duration_ms', duration_ms, 'stdout_bytes', octet_length(stdout),
		'stderr_bytes', octet_length(stderr), 'stdout_truncated', stdout_truncated,
		'stderr_truncated', stderr_truncated, 'error', error, 'worker', worker));
	PERFORM pg_advisory_unlock(exec_id);
	RETURN true;
END
$$;

-- Settles rows whose worker is gone (its session, and so its advisory lock,
-- ended).  A running row becomes outcome_unknown and is never re-run; a row
-- that was being classified or guarded is released for a safe retry.
-- Call it from a connection that holds no execution locks.  Returns how many.
CREATE FUNCTION airlock.worker_reap() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e record;
	n integer := 0;
BEGIN
	FOR e IN SELECT x.id, x.state, x.claimed_by FROM airlock.executions x
		 WHERE x.claimed_by IS NOT NULL AND x.state IN ('received', 'queued', 'approved', 'running')
		 ORDER BY x.id FOR UPDATE SKIP LOCKED LOOP
		CONTINUE WHEN NOT pg_try_advisory_xact_lock(e.id);
		IF e.state = 'running' THEN
			UPDATE airlock.executions SET state = 'outcome_unknown', finished_at = now(), claimed_by = NULL,
				error = 'the worker running it (' || e.claimed_by || ') died; the command may or may not have run'
			WHERE id = e.id;
			PERFORM airlock._event(e.id, 'running', 'outcome_unknown', jsonb_build_object(
				'dead_worker', e.claimed_by,
				'why', 'its database session ended while the command was running; it will not be re-run automatically'));
		ELSE
			UPDATE airlock.executions SET claimed_by = NULL WHERE id = e.id;
			PERFORM airlock._event(e.id, e.state, e.state, jsonb_build_object('dead_worker', e.claimed_by,
				'released', 'its worker died before sending the command; it will be retried'));
			PERFORM pg_notify('airlock_work', e.id::text);
		END IF;
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION
	airlock.worker_claim(text),
	airlock.worker_release(bigint, text, integer, text),
	airlock.worker_classified(bigint, text, text, jsonb, bigint, text, text, boolean),
	airlock.worker_revalidate(bigint, text, text, jsonb, bigint, text),
	airlock.worker_refuse(bigint, text, text, jsonb),
	airlock.worker_note(bigint, text, jsonb),
	airlock.worker_start(bigint, text, jsonb, jsonb),
	airlock.worker_finish(bigint, text, text, integer, integer, bytea, bytea, boolean, boolean, bigint, text),
	airlock.worker_reap()
TO airlock_worker;
