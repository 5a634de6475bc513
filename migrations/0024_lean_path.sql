-- 0024_lean_path.sql -- the same guarantees for less work per execution.
--
-- A read-only execution writes seven events and three row versions, and
-- every one of those writes used to call a PL/pgSQL trigger even when there
-- was nothing to refuse.  A trigger's WHEN condition is evaluated by the
-- executor itself, so the guards below call their function only for a write
-- they refuse.  What they let through is unchanged; an insert that carries
-- a seal is now refused rather than cleared (below).

-- ---------------------------------------------------------------- inserting an event

-- An event takes its id from the sequence and its time from the clock by
-- default.  Nothing but an unsealed event may be inserted: the sealer alone
-- gives it a position, a link and a hash (0018).  Until now an insert that
-- carried a seal had it silently cleared; it is now refused, and an event
-- is never chained by its writer either way.
ALTER TABLE airlock.execution_events
	ALTER COLUMN id SET DEFAULT nextval('airlock.execution_events_id_seq');

CREATE FUNCTION airlock._event_insert_sealed() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'execution_events: an event is inserted unsealed (no seq, prev_hash or hash); the sealer chains it'
		USING ERRCODE = '42501';
END
$$;
DROP TRIGGER execution_events_chain ON airlock.execution_events;
DROP FUNCTION airlock._chain_event();
CREATE TRIGGER execution_events_unsealed_only BEFORE INSERT ON airlock.execution_events
	FOR EACH ROW WHEN (NEW.seq IS NOT NULL OR NEW.prev_hash IS NOT NULL OR NEW.hash IS NOT NULL)
	EXECUTE FUNCTION airlock._event_insert_sealed();

CREATE OR REPLACE FUNCTION airlock._event(exec_id bigint, from_state text, to_state text, detail jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	INSERT INTO airlock.execution_events (execution_id, actor, from_state, to_state, detail)
	VALUES (exec_id, session_user, from_state, to_state, coalesce(detail, '{}'));
	IF from_state IS DISTINCT FROM to_state THEN
		PERFORM pg_notify('airlock_state', '');
	END IF;
END
$$;

-- ---------------------------------------------------------------- sealing an event

-- The one UPDATE allowed stays a seal of an unsealed event that leaves its
-- content as it was (the content compared as text, as the hash reads it);
-- _events_append_only is called for anything else, and says what is wrong.
-- What the seal says is still checked after the statement (_check_seals).
DROP TRIGGER execution_events_no_update ON airlock.execution_events;
CREATE TRIGGER execution_events_no_update BEFORE UPDATE ON airlock.execution_events
	FOR EACH ROW WHEN (NOT (OLD.seq IS NULL AND NEW.seq IS NOT NULL AND NEW.prev_hash IS NOT NULL
		AND NEW.hash IS NOT NULL
		AND (NEW.id, NEW.execution_id, NEW.at, NEW.actor, NEW.from_state, NEW.to_state, NEW.detail::text)
		    IS NOT DISTINCT FROM
		    (OLD.id, OLD.execution_id, OLD.at, OLD.actor, OLD.from_state, OLD.to_state, OLD.detail::text)))
	EXECUTE FUNCTION airlock._events_append_only();
CREATE TRIGGER execution_events_no_delete BEFORE DELETE ON airlock.execution_events
	FOR EACH ROW EXECUTE FUNCTION airlock._events_append_only();

-- ---------------------------------------------------------------- an event's request

-- Every event is written by _event (or the one call below) for a request
-- its caller has just read or locked, so the foreign key from an event to
-- its request checked what was already true, with one lookup per event.
-- What it also guaranteed, that no request with events is ever deleted,
-- holds for every request now: none is ever deleted, by anyone.
ALTER TABLE airlock.execution_events DROP CONSTRAINT execution_events_execution_id_fkey;
CREATE FUNCTION airlock._executions_kept() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'executions: a request is never deleted (% is not allowed); its events and records refer to it',
		TG_OP USING ERRCODE = '42501';
END
$$;
CREATE TRIGGER executions_no_delete BEFORE DELETE OR TRUNCATE ON airlock.executions
	FOR EACH STATEMENT EXECUTE FUNCTION airlock._executions_kept();

-- ---------------------------------------------------------------- announcing a state

-- As in 0014 and 0022: _notify_state's own test, in the trigger's WHEN, so
-- that the routine transitions of an observation call nothing.
DROP TRIGGER executions_notify ON airlock.executions;
CREATE TRIGGER executions_notify AFTER UPDATE OF state ON airlock.executions
	FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state
		AND NOT (NEW.state = 'approved' AND OLD.state = 'running')
		AND (NEW.state IN ('pending_approval', 'approved', 'rejected', 'expired', 'refused',
		                   'outcome_unknown')
		     OR (NEW.state IN ('succeeded', 'failed', 'timed_out', 'cancelled')
		         AND (NEW.class IS DISTINCT FROM 'read_only' OR NEW.approvals_required > 0
		              OR NEW.decided_at IS NOT NULL))))
	EXECUTE FUNCTION airlock._notify_state();

-- ---------------------------------------------------------------- the one call

-- As in 0019, with the classification's event and the start's written by
-- one INSERT.
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
	final text;
	new_state text;
	go boolean;
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
	PERFORM pg_advisory_lock(exec_id);
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
	WHERE x.id = exec_id;
	IF new_state = 'pending_approval' THEN
		PERFORM airlock._hold_for_approval(exec_id, final);
	END IF;
	-- Both events in one statement, in this order (ids, so chain positions,
	-- follow it), with the one notification _event would send for each.
	INSERT INTO airlock.execution_events (execution_id, actor, from_state, to_state, detail)
	SELECT exec_id, session_user, v.from_state, v.to_state, v.detail
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

-- As in 0002, with the row's update doing the check: one statement when the
-- row is still this worker's, as it nearly always is.
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
	UPDATE airlock.executions x SET state = final_state, exit_code = worker_finish.exit_code,
		signal = worker_finish.signal, stdout = worker_finish.stdout, stderr = worker_finish.stderr,
		stdout_truncated = worker_finish.stdout_truncated,
		stderr_truncated = worker_finish.stderr_truncated,
		duration_ms = worker_finish.duration_ms, error = worker_finish.error,
		finished_at = now(), claimed_by = NULL
	WHERE x.id = exec_id AND x.state = 'running' AND x.claimed_by = worker;
	IF NOT FOUND THEN
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
		'stderr_truncated', stderr_truncated, 'error', error, 'worker', worker));
	PERFORM pg_advisory_unlock(exec_id);
	RETURN true;
END
$$;

-- ---------------------------------------------------------------- a request's record

-- As in 0005 and 0011: a record of every insert, and of every update that
-- changes what a record holds (claims and leases alone do not).  The test
-- moves from the trigger's WHEN into the function: a WHEN is read from the
-- catalog and compiled again for every UPDATE statement, and this one
-- compares 29 columns, while the function's test is compiled once per
-- session.  Every update on the hot path changes the state, so it records
-- either way.
CREATE OR REPLACE FUNCTION airlock._record_execution() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND (
		OLD.state, OLD.target, OLD.target_type, OLD.requested_by, OLD.command, OLD.declared_risk,
		OLD.change_id, OLD.action, OLD.class, OLD.reasons, OLD.policy_version, OLD.payload_hash,
		OLD.approvals_required, OLD.rewind_status, OLD.rewind_possible, OLD.rewind_points,
		OLD.exit_code, OLD.signal, OLD.stdout, OLD.stderr, OLD.stdout_truncated,
		OLD.stderr_truncated, OLD.duration_ms, OLD.error, OLD.kind, OLD.confinement,
		OLD.gate_version, OLD.approval_valid_until, OLD.approved_probe)
	   IS NOT DISTINCT FROM (
		NEW.state, NEW.target, NEW.target_type, NEW.requested_by, NEW.command, NEW.declared_risk,
		NEW.change_id, NEW.action, NEW.class, NEW.reasons, NEW.policy_version, NEW.payload_hash,
		NEW.approvals_required, NEW.rewind_status, NEW.rewind_possible, NEW.rewind_points,
		NEW.exit_code, NEW.signal, NEW.stdout, NEW.stderr, NEW.stdout_truncated,
		NEW.stderr_truncated, NEW.duration_ms, NEW.error, NEW.kind, NEW.confinement,
		NEW.gate_version, NEW.approval_valid_until, NEW.approved_probe) THEN
		RETURN NULL;
	END IF;
	PERFORM airlock._event(NEW.id, 'record', 'record',
		jsonb_build_object('record', 'execution', 'execution', airlock._execution_record(NEW)));
	RETURN NULL;
END
$$;
DROP TRIGGER executions_record_update ON airlock.executions;
CREATE TRIGGER executions_record_update AFTER UPDATE ON airlock.executions
	FOR EACH ROW EXECUTE FUNCTION airlock._record_execution();

-- ---------------------------------------------------------------- the sealer's scan

-- A seal leaves the unsealed version of each event it seals behind as a dead
-- row, with its entry in the partial index of unsealed events, until vacuum
-- removes both.  A bitmap scan of that index visits every such row at every
-- call, since a bitmap scan never marks an index entry dead: the sealer's
-- cost grew with the events sealed since the last vacuum (an empty call
-- took 0.26 ms after 1,600 events and 1.27 ms after 9,600).  A plain index
-- scan marks what it found dead, and the next call steps over it.
ALTER FUNCTION airlock.seal_events(integer) SET enable_bitmapscan = off;

SELECT airlock._secure_new_objects();
