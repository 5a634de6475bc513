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
-- 3. A wake-up names the row and goes to one daemon (see worker_channels).

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


-- ---------------------------------------------------------------- wake-up with the row id, to one daemon

-- Each airlockd registers a channel of its own, named with 128 random bits,
-- and LISTENs on it.  When a row becomes claimable (inserted, approved, or
-- given back), one live daemon's channel gets a NOTIFY whose payload is the
-- row id, so one worker of that daemon is woken and claims that row
-- directly.  Any login may LISTEN on any channel, so the names are the
-- secret: this table is readable by its owner only, and pg_stat_activity
-- shows a session's last statement (the LISTEN) to its own role and to
-- superusers only.  The payload-free airlock_work NOTIFY stays for daemons
-- without a channel.
CREATE TABLE airlock.worker_channels (
	channel       text PRIMARY KEY CHECK (channel ~ '^airlock_w_[0-9a-f]{32}$'),
	worker        text NOT NULL,
	backend_pid   integer NOT NULL,
	role_oid      oid NOT NULL,
	registered_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE airlock.worker_channels IS
	'Each daemon''s secret NOTIFY channel for targeted wake-ups (row id as payload); owner only.';

-- Whether the session that registered a channel is still there: its
-- backend exists and runs as the same role (a reused pid of another login
-- is not it).  pg_stat_get_activity shows pid and role to every caller.
CREATE FUNCTION airlock._channel_alive(c airlock.worker_channels) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
BEGIN
	RETURN EXISTS (SELECT 1 FROM pg_catalog.pg_stat_get_activity(c.backend_pid) a
		       WHERE a.usesysid = c.role_oid);
END
$$;

-- A new channel for the calling session (its LISTEN connection); channels
-- of sessions that are gone, and this session's earlier one, are dropped.
CREATE FUNCTION airlock.worker_channel(worker text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ch text := 'airlock_w_' || replace(gen_random_uuid()::text, '-', '');
	me oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = session_user);
BEGIN
	IF worker IS NULL OR btrim(worker) = '' THEN
		RAISE EXCEPTION 'worker_channel: a worker id is required' USING ERRCODE = 'AL002';
	END IF;
	-- A registration needs no standby's confirmation (a lost one only means
	-- wake-ups that name no row): its commit must not wait for one, or a
	-- daemon could not start while a synchronous standby is away.
	PERFORM set_config('synchronous_commit', 'local', true);
	DELETE FROM airlock.worker_channels c
	WHERE c.backend_pid = pg_backend_pid() OR NOT airlock._channel_alive(c);
	INSERT INTO airlock.worker_channels (channel, worker, backend_pid, role_oid)
	VALUES (ch, worker, pg_backend_pid(), me);
	RETURN ch;
END
$$;

-- One live daemon, picked at random, is told the row id.
CREATE FUNCTION airlock._wake_one() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	ch text;
BEGIN
	SELECT c.channel INTO ch FROM airlock.worker_channels c
	WHERE airlock._channel_alive(c) ORDER BY random() LIMIT 1;
	IF ch IS NOT NULL THEN
		PERFORM pg_notify(ch, NEW.id::text);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER executions_wake AFTER INSERT OR UPDATE OF state, claimed_by, run_after
	ON airlock.executions
	FOR EACH ROW WHEN (NEW.state IN ('received', 'queued', 'approved') AND NEW.claimed_by IS NULL)
	EXECUTE FUNCTION airlock._wake_one();

-- worker_claim with the row a wake-up named: that row when it can be
-- claimed now, else the oldest claimable one (as worker_claim(worker)), so a
-- stale hint costs nothing more than a plain claim.  It also says the row's
-- kind, which the worker otherwise asked for in a statement of its own.
CREATE FUNCTION airlock.worker_claim(worker text, hint bigint)
RETURNS TABLE (id bigint, state text, target text, target_type text, command text,
	       declared_risk text, change_id text, action text, requested_by text, class text,
	       policy_version bigint, rewind_possible boolean, attempts integer, vmid integer,
	       node text, address text, port integer, ssh_user text, host_key_fingerprint text,
	       zerto_vm_identifier text, kind text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	cid bigint;
BEGIN
	IF hint IS NOT NULL THEN
		WITH c AS (
			SELECT x.id FROM airlock.executions x
			WHERE x.id = hint AND x.state IN ('received', 'queued', 'approved')
			  AND x.claimed_by IS NULL AND x.run_after <= now()
			FOR UPDATE SKIP LOCKED)
		UPDATE airlock.executions e SET claimed_by = worker, lease_until = NULL
		FROM c WHERE e.id = c.id
		RETURNING e.id INTO cid;
	END IF;
	IF cid IS NULL THEN
		RETURN QUERY SELECT c.*, (SELECT x.kind FROM airlock.executions x WHERE x.id = c.id)
			FROM airlock.worker_claim(worker) c;
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

SELECT airlock._secure_new_objects();
REVOKE ALL ON airlock.worker_channels FROM PUBLIC;

GRANT EXECUTE ON FUNCTION
	airlock.worker_start(bigint, text, jsonb, jsonb, text),
	airlock.worker_channel(text),
	airlock.worker_claim(text, bigint)
TO airlock_worker;
