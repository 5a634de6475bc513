-- 0009_exactly_once.sql -- retries that count only real failures, a deadline
-- instead of a retry count, schedules that survive a clock step, and what
-- airlockd needs to check the database can keep its promise.
--
-- attempts now counts failures to reach the target, not claims: a row that
-- waited for a busy target, for a policy or for a durable database was
-- never tried.

-- The claim no longer counts an attempt (see worker_unreachable).
CREATE OR REPLACE FUNCTION airlock.worker_claim(worker text)
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
	UPDATE airlock.executions e SET claimed_by = worker, lease_until = NULL
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

-- The longest delay a worker ever asks for.  A row scheduled further ahead
-- than this (plus a margin) can only be there because the database's clock
-- stepped back: worker_clock_check() pulls such rows in.
CREATE FUNCTION airlock._max_retry_delay() RETURNS interval
LANGUAGE sql IMMUTABLE AS $$ SELECT interval '60 seconds' $$;

-- As before (the wake-up carries no payload: notifications are visible to
-- every login), but a delay is capped at _max_retry_delay(), and a reason
-- equal to the one recorded by the row's previous event is not recorded again
-- (a row waiting out the same condition does not fill its history).
CREATE OR REPLACE FUNCTION airlock.worker_release(exec_id bigint, worker text, delay_ms integer, reason text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	last_reason text;
	delay interval := least(make_interval(secs => greatest(delay_ms, 0) / 1000.0),
				airlock._max_retry_delay());
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received', 'queued', 'approved']);
	UPDATE airlock.executions SET claimed_by = NULL, run_after = now() + delay
	WHERE id = exec_id;
	IF reason IS NOT NULL THEN
		SELECT detail->>'released' INTO last_reason FROM airlock.execution_events
		WHERE execution_id = exec_id ORDER BY id DESC LIMIT 1;
		IF last_reason IS DISTINCT FROM reason THEN
			PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('released', reason,
				'worker', worker, 'retry_in_ms', delay_ms));
		END IF;
	END IF;
	PERFORM pg_advisory_unlock(exec_id);
	PERFORM pg_notify('airlock_work', '');
END
$$;

-- When a request that has not run yet stops being worth running: its TTL
-- (the one that bounds a pending request, by class; config_mutation's for
-- rows that needed no approval) counted from its approval, or from its
-- creation when it needed none.
CREATE FUNCTION airlock._run_deadline(e airlock.executions) RETURNS timestamptz
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT coalesce(e.decided_at, e.created_at) + coalesce(
		(SELECT g.ttl FROM airlock.gate_policy g WHERE g.class = e.class),
		(SELECT g.ttl FROM airlock.gate_policy g WHERE g.class = 'config_mutation'),
		interval '1 hour')
$$;

-- The target could not be reached before anything was sent: one attempt.
-- Before the row's deadline it is released for a retry after delay_ms (the
-- first failure of a run of them is recorded, not every retry); after it,
-- it is refused, naming the outage and how long it lasted.  Returns the
-- row's new state ('queued'/'approved' or 'refused').
CREATE FUNCTION airlock.worker_unreachable(exec_id bigint, worker text, delay_ms integer, reason text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	deadline timestamptz;
	first_failure timestamptz;
	last_reason text;
	why text;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received', 'queued', 'approved']);
	UPDATE airlock.executions x SET attempts = x.attempts + 1 WHERE x.id = exec_id;
	deadline := airlock._run_deadline(e);
	IF now() < deadline THEN
		UPDATE airlock.executions x SET claimed_by = NULL, run_after = now() + least(
			make_interval(secs => greatest(delay_ms, 0) / 1000.0), airlock._max_retry_delay())
		WHERE x.id = exec_id;
		SELECT v.detail->>'released' INTO last_reason FROM airlock.execution_events v
		WHERE v.execution_id = exec_id ORDER BY v.id DESC LIMIT 1;
		IF last_reason IS DISTINCT FROM reason THEN
			PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('released', reason,
				'unreachable', true, 'worker', worker, 'retry_in_ms', delay_ms,
				'deadline', deadline));
		END IF;
		PERFORM pg_advisory_unlock(exec_id);
		PERFORM pg_notify('airlock_work', '');
		RETURN e.state;
	END IF;
	SELECT min(v.at) INTO first_failure FROM airlock.execution_events v
	WHERE v.execution_id = exec_id AND v.detail->>'unreachable' = 'true';
	why := format('%s: still unreachable when the request''s deadline passed (%s; %s attempts '
		'since %s). Nothing ran.', reason,
		to_char(deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), e.attempts + 1,
		to_char(coalesce(first_failure, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
	PERFORM airlock.worker_refuse(exec_id, worker, why, jsonb_build_object('unreachable', true));
	RETURN 'refused';
END
$$;

-- Rows scheduled further ahead than any delay a worker asks for: the
-- database's clock stepped back since they were released.  They are due now.
-- Returns how many, and how far ahead the furthest one was.
CREATE FUNCTION airlock.worker_clock_check(OUT rows integer, OUT max_ahead_ms bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	WITH ahead AS (
		SELECT e.id, e.run_after FROM airlock.executions e
		WHERE e.state IN ('received', 'queued', 'approved') AND e.claimed_by IS NULL
		  AND e.run_after > now() + airlock._max_retry_delay() + interval '30 seconds'
		FOR UPDATE SKIP LOCKED),
	moved AS (
		UPDATE airlock.executions e SET run_after = now() FROM ahead
		WHERE e.id = ahead.id
		RETURNING ahead.run_after - now() AS was_ahead)
	SELECT count(*), coalesce(max(extract(epoch FROM was_ahead) * 1000), 0)::bigint
	INTO rows, max_ahead_ms FROM moved;
	IF rows > 0 THEN
		PERFORM pg_notify('airlock_work', '');
	END IF;
END
$$;

-- What airlockd checks before it lets a mutation be sent: a crash of the
-- database must not lose the commit that marked a row running.
CREATE FUNCTION airlock.worker_durability() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_build_object(
		'fsync', current_setting('fsync'),
		'synchronous_commit', current_setting('synchronous_commit'),
		'synchronous_standby_names', current_setting('synchronous_standby_names'),
		'in_recovery', pg_is_in_recovery(),
		'standbys', coalesce((SELECT jsonb_agg(jsonb_build_object(
				'name', r.application_name, 'state', r.state, 'sync_state', r.sync_state)
				ORDER BY r.application_name)
			FROM pg_stat_replication r), '[]'::jsonb))
$$;

SELECT airlock._secure_new_objects();

-- worker_durability reads pg_stat_replication's sync_state, which only
-- members of pg_read_all_stats see for other roles' connections.
GRANT pg_read_all_stats TO airlock_owner;

GRANT EXECUTE ON FUNCTION
	airlock.worker_unreachable(bigint, text, integer, text),
	airlock.worker_clock_check(),
	airlock.worker_durability()
TO airlock_worker;
