-- 0032_fair_claim.sql -- nothing stuck, nobody starved.
--
-- 1. The claim skips the rows whose node has no free slot in the claiming
--    daemon (it says which nodes are full): a worker never claims a row it
--    would have to wait with, so a busy or stalled node delays only its own
--    rows.  Rows still waiting to be classified are claimed whatever their
--    node: classifying needs no slot.
-- 2. A row whose next step could not be written is given back until that
--    lands (worker_settle), and a worker's claim first gives back any row
--    it still holds: no row stays claimed by a worker that no longer works
--    on it.
-- 3. The reaper knows the daemon it runs in: rows claimed by this daemon's
--    workers are settled only when none of them is working on the row
--    (the daemon names the rows it works on); rows of another daemon only
--    once that daemon has not been seen for a grace period, so a live
--    worker whose session a database restart ended takes its row back and
--    writes its known result instead of a false "worker died".

-- ---------------------------------------------------------------- the daemons seen

-- One row per daemon (its worker_id): when its reaper last ran.  A daemon
-- that stops removes its row, so its rows are settled at once.
CREATE TABLE airlock.worker_daemons (
	worker  text PRIMARY KEY,
	seen_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE airlock.worker_daemons IS
	'Each running airlockd (worker_id) and when its reaper last ran; owner only.';

-- The daemon a worker belongs to: claimed_by is "<worker_id>/<thread>".
CREATE FUNCTION airlock._daemon_of(claimed_by text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT regexp_replace(claimed_by, '/[0-9]+$', '') $$;

-- The rows claimed by one worker (a handful at any time): what the claim
-- gives back and the reaper reads.
CREATE INDEX executions_claimed ON airlock.executions (claimed_by) WHERE claimed_by IS NOT NULL;

-- ---------------------------------------------------------------- giving a row back

-- Lets go of the row's liveness lock, however often this session holds it
-- (a lock it does not hold is left alone, without a warning).
CREATE FUNCTION airlock._let_go(exec_id bigint) RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	WHILE EXISTS (SELECT 1 FROM pg_catalog.pg_locks l
		      WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
			AND l.objsubid = 1 AND l.classid = (exec_id >> 32)::oid
			AND l.objid = (exec_id & 4294967295)::oid) LOOP
		PERFORM pg_advisory_unlock(exec_id);
	END LOOP;
END
$$;

-- The caller holds the row and nothing of its command was sent: the row is
-- given back to be claimed again after delay_ms, from wherever it stands.
-- A row not yet running is released (as worker_release); a row marked
-- running whose command never left goes back to the state it started from,
-- with an event saying nothing ran.  Returns 'released', 'not_sent', or
-- 'not_held' when the row is not this worker's (any more): cancelled, or
-- settled by a reaper, and its lock is let go.  Safe to call again after a
-- lost answer: the second call finds the row not held.
CREATE FUNCTION airlock.worker_settle(exec_id bigint, worker text, delay_ms integer, reason text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	before text;
	delay interval := least(make_interval(secs => greatest(coalesce(delay_ms, 0), 0) / 1000.0),
				airlock._max_retry_delay());
	last_reason text;
BEGIN
	IF worker IS NULL OR btrim(worker) = '' THEN
		RAISE EXCEPTION 'worker_settle: a worker id is required' USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO e FROM airlock.executions x WHERE x.id = exec_id FOR UPDATE;
	IF NOT FOUND OR e.claimed_by IS DISTINCT FROM worker
	   OR e.state NOT IN ('received', 'queued', 'approved', 'running') THEN
		-- Not ours: whatever lock this session still has on it goes.
		PERFORM airlock._let_go(exec_id);
		RETURN 'not_held';
	END IF;
	IF e.state = 'running' THEN
		SELECT v.from_state INTO before FROM airlock.execution_events v
		WHERE v.execution_id = exec_id AND v.to_state = 'running'
		  AND v.from_state IN ('queued', 'approved')
		ORDER BY v.id DESC LIMIT 1;
		UPDATE airlock.executions x SET state = coalesce(before, 'queued'), claimed_by = NULL,
			started_at = NULL, confinement = NULL, run_after = now() + delay
		WHERE x.id = exec_id;
		PERFORM airlock._event(exec_id, 'running', coalesce(before, 'queued'), jsonb_build_object(
			'not_sent', true, 'nothing_ran', true, 'released', coalesce(reason,
				'the start could not be confirmed; the command was not sent'),
			'retry_in_ms', delay_ms, 'worker', worker));
		PERFORM airlock._let_go(exec_id);
		PERFORM pg_notify('airlock_work', '');
		RETURN 'not_sent';
	END IF;
	UPDATE airlock.executions x SET claimed_by = NULL, run_after = now() + delay
	WHERE x.id = exec_id;
	IF reason IS NOT NULL THEN
		SELECT v.detail->>'released' INTO last_reason FROM airlock.execution_events v
		WHERE v.execution_id = exec_id ORDER BY v.id DESC LIMIT 1;
		IF last_reason IS DISTINCT FROM reason THEN
			PERFORM airlock._event(exec_id, e.state, e.state, jsonb_build_object('released', reason,
				'worker', worker, 'retry_in_ms', delay_ms));
		END IF;
	END IF;
	PERFORM airlock._let_go(exec_id);
	PERFORM pg_notify('airlock_work', '');
	RETURN 'released';
END
$$;

-- ---------------------------------------------------------------- the fair claim

-- Whether the row waits for a slot on one of the given nodes: a run row
-- queued or approved (it goes on to execute); a row being classified does not.
CREATE FUNCTION airlock._waits_for_full_node(e airlock.executions, full_nodes text[]) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
BEGIN
	RETURN e.kind = 'run' AND e.state IN ('queued', 'approved') AND EXISTS (
		SELECT 1 FROM airlock.entities t
		WHERE t.slug = e.target AND coalesce(t.node, t.slug) = ANY (full_nodes));
END
$$;

-- worker_claim(worker, hint) for a daemon whose slots are full on
-- full_nodes (an empty array or NULL: none is).  Before it claims, any
-- row this worker still holds unsettled (a write about it kept failing
-- and was given up) is given back: a worker claims only when it works on
-- nothing, so such a row is not being worked on.
CREATE FUNCTION airlock.worker_claim(worker text, hint bigint, full_nodes text[])
RETURNS TABLE (id bigint, state text, target text, target_type text, command text,
	       declared_risk text, change_id text, action text, requested_by text, class text,
	       policy_version bigint, rewind_possible boolean, attempts integer, vmid integer,
	       node text, address text, port integer, ssh_user text, host_key_fingerprint text,
	       zerto_vm_identifier text, kind text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	cid bigint;
	left_over bigint;
BEGIN
	FOR left_over IN SELECT x.id FROM airlock.executions x
		 WHERE x.claimed_by = worker AND x.state IN ('received', 'queued', 'approved')
		 ORDER BY x.id FOR UPDATE SKIP LOCKED LOOP
		PERFORM airlock.worker_settle(left_over, worker, 0,
			'given back: its worker moved on after a write about it failed');
	END LOOP;
	IF full_nodes IS NULL OR cardinality(full_nodes) = 0 THEN
		RETURN QUERY SELECT * FROM airlock.worker_claim(worker, hint);
		RETURN;
	END IF;
	IF hint IS NOT NULL THEN
		WITH c AS (
			SELECT x.id FROM airlock.executions x
			WHERE x.id = hint AND x.state IN ('received', 'queued', 'approved')
			  AND x.claimed_by IS NULL AND x.run_after <= now()
			  AND NOT airlock._waits_for_full_node(x, full_nodes)
			FOR UPDATE SKIP LOCKED)
		UPDATE airlock.executions e SET claimed_by = worker, lease_until = NULL
		FROM c WHERE e.id = c.id
		RETURNING e.id INTO cid;
	END IF;
	IF cid IS NULL THEN
		WITH c AS (
			SELECT x.id FROM airlock.executions x
			WHERE x.state IN ('received', 'queued', 'approved') AND x.claimed_by IS NULL
			  AND x.run_after <= now()
			  AND NOT airlock._waits_for_full_node(x, full_nodes)
			ORDER BY x.run_after, x.id
			LIMIT 1
			FOR UPDATE SKIP LOCKED)
		UPDATE airlock.executions e SET claimed_by = worker, lease_until = NULL
		FROM c WHERE e.id = c.id
		RETURNING e.id INTO cid;
	END IF;
	IF cid IS NULL THEN
		RETURN;
	END IF;
	PERFORM pg_advisory_lock(cid);
	RETURN QUERY
		SELECT e.id, e.state, e.target, e.target_type, e.command, e.declared_risk, e.change_id,
		       e.action, e.requested_by, e.class, e.policy_version, e.rewind_possible, e.attempts,
		       t.vmid, h.slug, h.address, h.port, h.ssh_user, h.host_key_fingerprint,
		       t.zerto_vm_identifier, e.kind
		FROM airlock.executions e
		JOIN airlock.entities t ON t.slug = e.target
		JOIN airlock.entities h ON h.slug = coalesce(t.node, t.slug)
		WHERE e.id = cid;
END
$$;

-- ---------------------------------------------------------------- the reaper, per daemon

-- Settles rows whose worker no longer works on them, for the daemon
-- `daemon` (its worker_id), which names the rows its workers hold now
-- (`working`).  Whatever the row, its liveness lock must be free: a lock
-- still held means a session is on it.  Then:
--   * a row claimed by one of this daemon's workers and not in `working`
--     is settled now: no worker of ours is on it;
--   * a row claimed by one of this daemon's workers and in `working` is
--     left alone: the worker is alive and takes its lock again on its new
--     session (after a database restart, say), then writes its result;
--   * a row of another daemon is settled once that daemon has not run its
--     reaper for grace_ms and this server has been up at least that long:
--     a live daemon is given the time to come back after a restart or a
--     failover before its rows are called dead.
-- Settling is as before: a row that was running becomes outcome_unknown;
-- any other is released and retried.  Records this daemon as seen.
-- Returns how many rows were settled.
CREATE FUNCTION airlock.worker_reap(daemon text, working bigint[], grace_ms integer)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e record;
	n integer := 0;
	mine boolean;
	grace interval := make_interval(secs => greatest(coalesce(grace_ms, 0), 0) / 1000.0);
	young boolean := pg_postmaster_start_time() > now() - grace;
	why text;
BEGIN
	IF daemon IS NULL OR btrim(daemon) = '' THEN
		RAISE EXCEPTION 'worker_reap: a worker id is required' USING ERRCODE = 'AL002';
	END IF;
	-- Whether this daemon's heartbeat reaches a standby matters to nobody:
	-- its commit need not wait for one.
	PERFORM set_config('synchronous_commit', 'local', true);
	INSERT INTO airlock.worker_daemons AS w (worker, seen_at) VALUES (daemon, now())
	ON CONFLICT (worker) DO UPDATE SET seen_at = now();
	FOR e IN SELECT x.id, x.state, x.claimed_by FROM airlock.executions x
		 WHERE x.claimed_by IS NOT NULL AND x.state IN ('received', 'queued', 'approved', 'running')
		 ORDER BY x.id FOR UPDATE SKIP LOCKED LOOP
		mine := airlock._daemon_of(e.claimed_by) = daemon;
		CONTINUE WHEN mine AND e.id = ANY (coalesce(working, '{}'));
		CONTINUE WHEN NOT mine AND (young OR EXISTS (
			SELECT 1 FROM airlock.worker_daemons w
			WHERE w.worker = airlock._daemon_of(e.claimed_by) AND w.seen_at > now() - grace));
		CONTINUE WHEN NOT pg_try_advisory_xact_lock(e.id);
		IF e.state = 'running' THEN
			why := CASE WHEN mine
				THEN 'its worker (' || e.claimed_by || ') no longer works on it and could not '
				     'record a result; the command may or may not have run'
				ELSE 'the worker running it (' || e.claimed_by || ') died; the command may or '
				     'may not have run' END;
			UPDATE airlock.executions x SET state = 'outcome_unknown', finished_at = now(),
				claimed_by = NULL, error = why
			WHERE x.id = e.id;
			PERFORM airlock._event(e.id, 'running', 'outcome_unknown', jsonb_build_object(
				'dead_worker', e.claimed_by, 'reaped_by', daemon,
				'why', CASE WHEN mine
					THEN 'its worker''s session ended and no worker of its daemon holds it; it will not be re-run automatically'
					ELSE 'its database session ended while the command was running and its daemon was not seen for '
					     || grace_ms || ' ms; it will not be re-run automatically' END));
		ELSE
			UPDATE airlock.executions x SET claimed_by = NULL WHERE x.id = e.id;
			PERFORM airlock._event(e.id, e.state, e.state, jsonb_build_object(
				'dead_worker', e.claimed_by, 'reaped_by', daemon,
				'released', CASE WHEN mine
					THEN 'no worker of its daemon works on it any more; it will be retried'
					ELSE 'its worker died before sending the command; it will be retried' END));
			PERFORM pg_notify('airlock_work', '');
		END IF;
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

-- A daemon that stops says so: its rows need no grace.
CREATE FUNCTION airlock.worker_gone(daemon text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM set_config('synchronous_commit', 'local', true);
	DELETE FROM airlock.worker_daemons w WHERE w.worker = daemon;
END
$$;

-- ---------------------------------------------------------------- a refusal with what the guard made

-- As worker_refuse, also recording on the row the rewind points (a JSON
-- array) of checkpoints a refused guard inserted anyway: a checkpoint
-- airlock caused is on the row that caused it, even when nothing ran.
CREATE FUNCTION airlock.worker_refuse(exec_id bigint, worker text, reason text, detail jsonb,
	rewind_points jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	IF rewind_points IS NOT NULL AND jsonb_typeof(rewind_points) <> 'array' THEN
		RAISE EXCEPTION 'worker_refuse: rewind_points must be a JSON array' USING ERRCODE = 'AL002';
	END IF;
	e := airlock._held(exec_id, worker, ARRAY['received', 'queued', 'approved']);
	UPDATE airlock.executions x SET state = 'refused', error = reason, finished_at = now(),
		claimed_by = NULL, rewind_points = worker_refuse.rewind_points
	WHERE x.id = exec_id;
	PERFORM airlock._event(exec_id, e.state, 'refused', coalesce(detail, '{}') ||
		jsonb_build_object('reason', reason, 'worker', worker, 'rewind_points', rewind_points));
	PERFORM airlock._let_go(exec_id);
END
$$;

-- ---------------------------------------------------------------- the clock stepped forward

-- Forward steps of the database's clock that a daemon noticed (against its
-- own monotonic clock), so that several daemons noticing one step move the
-- deadlines once.
CREATE TABLE airlock.clock_steps (
	id         bigserial PRIMARY KEY,
	noticed_at timestamptz NOT NULL DEFAULT now(),
	step_ms    bigint NOT NULL,
	noticed_by text NOT NULL
);
COMMENT ON TABLE airlock.clock_steps IS
	'Forward steps of the database clock that airlockd noticed; owner only.';

-- The database's clock stepped forward by step_ms (a daemon saw its clock
-- gain that much over its own monotonic one since it last looked, at
-- `since` by the clock before the step).  A request's TTL and an
-- approval's validity measure time that passed; a step is none: every open
-- deadline moves with it (pending rows' expires_at, approved rows'
-- approval_valid_until), each with an event saying why.  A row that
-- expired since `since` (the step may have voided it before a daemon
-- noticed) gets a sentence on its error and an event saying so.  A step
-- within a minute of one noticed in the last ten minutes is that one: 0.
-- Returns how many rows it changed.
CREATE FUNCTION airlock.worker_clock_stepped_forward(worker text, step_ms bigint, since timestamptz)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	step interval := make_interval(secs => step_ms / 1000.0);
	r airlock.executions;
	n integer := 0;
	said text;
BEGIN
	IF worker IS NULL OR btrim(worker) = '' OR step_ms IS NULL OR step_ms <= 0 THEN
		RAISE EXCEPTION 'worker_clock_stepped_forward: a worker id and a positive step are required'
			USING ERRCODE = 'AL002';
	END IF;
	PERFORM pg_advisory_xact_lock(74287738, 1); -- LOCK_KIND_CLOCK
	IF EXISTS (SELECT 1 FROM airlock.clock_steps c
		   WHERE c.noticed_at > now() - interval '10 minutes'
		     AND abs(c.step_ms - worker_clock_stepped_forward.step_ms) < 60000) THEN
		RETURN 0;
	END IF;
	INSERT INTO airlock.clock_steps (step_ms, noticed_by) VALUES (step_ms, worker);
	said := format('the database''s clock stepped forward by %s s (noticed by %s)',
		round(step_ms / 1000.0), worker);
	FOR r IN SELECT * FROM airlock.executions x
		 WHERE (x.state = 'approved' AND x.approval_valid_until IS NOT NULL)
		    OR (x.state = 'pending_approval' AND x.expires_at IS NOT NULL)
		 ORDER BY x.id FOR UPDATE LOOP
		UPDATE airlock.executions x SET
			approval_valid_until = CASE WHEN r.state = 'approved' THEN x.approval_valid_until + step
						    ELSE x.approval_valid_until END,
			expires_at = CASE WHEN r.state = 'pending_approval' THEN x.expires_at + step
					  ELSE x.expires_at END
		WHERE x.id = r.id;
		PERFORM airlock._event(r.id, r.state, r.state, jsonb_build_object(
			'clock_stepped_forward_ms', step_ms, 'worker', worker,
			'moved', CASE WHEN r.state = 'approved' THEN 'approval_valid_until' ELSE 'expires_at' END,
			'to', CASE WHEN r.state = 'approved' THEN r.approval_valid_until + step ELSE r.expires_at + step END,
			'why', said || ': its deadline moves with the clock, as no time passed'));
		n := n + 1;
	END LOOP;
	FOR r IN SELECT * FROM airlock.executions x
		 WHERE x.state = 'expired' AND x.finished_at >= since ORDER BY x.id FOR UPDATE LOOP
		UPDATE airlock.executions x SET error = concat_ws(' ', x.error, 'Note: ' || said ||
			' just before this expired; it may have expired because of the step, not because '
			'its time ran out. Ask again.')
		WHERE x.id = r.id;
		PERFORM airlock._event(r.id, 'expired', 'expired', jsonb_build_object(
			'clock_stepped_forward_ms', step_ms, 'worker', worker,
			'why', said || ' just before this expired: the expiry may be the step''s'));
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

SELECT airlock._secure_new_objects();
REVOKE ALL ON airlock.worker_daemons FROM PUBLIC;
REVOKE ALL ON airlock.clock_steps FROM PUBLIC;

GRANT EXECUTE ON FUNCTION
	airlock.worker_settle(bigint, text, integer, text),
	airlock.worker_claim(text, bigint, text[]),
	airlock.worker_reap(text, bigint[], integer),
	airlock.worker_gone(text),
	airlock.worker_refuse(bigint, text, text, jsonb, jsonb),
	airlock.worker_clock_stepped_forward(text, bigint, timestamptz)
TO airlock_worker;

-- ---------------------------------------------------------------- which server is this?

-- As in 0009, and which server answers: its system identifier (a restore
-- into another cluster changes it) and its timeline (a promotion changes
-- it), so that a daemon that reconnects knows whether it reached the server
-- it checked before.
CREATE OR REPLACE FUNCTION airlock.worker_durability() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_build_object(
		'fsync', current_setting('fsync'),
		'synchronous_commit', current_setting('synchronous_commit'),
		'synchronous_standby_names', current_setting('synchronous_standby_names'),
		'in_recovery', pg_is_in_recovery(),
		'standbys', coalesce((SELECT jsonb_agg(jsonb_build_object(
				'name', r.application_name, 'state', r.state, 'sync_state', r.sync_state)
				ORDER BY r.application_name)
			FROM pg_stat_replication r), '[]'::jsonb),
		'system_identifier', (SELECT c.system_identifier::text FROM pg_control_system() c),
		'timeline', CASE WHEN pg_is_in_recovery()
			THEN (SELECT c.timeline_id FROM pg_control_checkpoint() c)
			ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer END)
$$;
