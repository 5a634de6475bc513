-- 0001_schema.sql -- airlock v1: the queue, its history, the estate, roles and the SQL API.
--
-- Applied by `airlock migrate` in one transaction.  Forward-only: never edit
-- this file once landed; add 0002_*.sql instead.
--
-- Security model: tables belong to the NOLOGIN role airlock_owner.  The four
-- group roles (airlock_agent, airlock_operator, airlock_worker,
-- airlock_scheduler) get no table writes at all; every write goes through a
-- SECURITY DEFINER function with a pinned search_path, and EXECUTE is granted
-- per function.  A role without EXECUTE gets PostgreSQL's own
-- "permission denied".  Identity is always session_user.

DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'airlock_owner') THEN
		CREATE ROLE airlock_owner NOLOGIN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'airlock_agent') THEN
		CREATE ROLE airlock_agent NOLOGIN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'airlock_operator') THEN
		CREATE ROLE airlock_operator NOLOGIN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'airlock_worker') THEN
		CREATE ROLE airlock_worker NOLOGIN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'airlock_scheduler') THEN
		CREATE ROLE airlock_scheduler NOLOGIN;
	END IF;
END
$$;

REVOKE ALL ON SCHEMA airlock FROM PUBLIC;
GRANT USAGE ON SCHEMA airlock TO airlock_agent, airlock_operator, airlock_worker, airlock_scheduler;

-- ---------------------------------------------------------------- estate

CREATE TABLE airlock.entities (
	id                   bigserial PRIMARY KEY,
	slug                 text NOT NULL UNIQUE,
	type                 text NOT NULL CHECK (type IN ('proxmox-host', 'vm', 'lxc')),
	node                 text REFERENCES airlock.entities (slug),
	vmid                 integer CHECK (vmid BETWEEN 100 AND 999999999),
	address              text,
	port                 integer CHECK (port BETWEEN 1 AND 65535),
	ssh_user             text,
	host_key_fingerprint text,
	zerto_vm_identifier  text,
	attributes           jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
	created_at           timestamptz NOT NULL DEFAULT now(),
	updated_at           timestamptz NOT NULL DEFAULT now(),
	CONSTRAINT slug_matches_type CHECK (slug ~ '^[a-z-]+:[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'
	                                    AND split_part(slug, ':', 1) = type),
	CONSTRAINT guest_has_node CHECK ((type = 'proxmox-host') = (node IS NULL)),
	CONSTRAINT guest_has_vmid CHECK (type = 'proxmox-host' OR vmid IS NOT NULL),
	CONSTRAINT host_has_address CHECK (type <> 'proxmox-host' OR address IS NOT NULL)
);
COMMENT ON TABLE airlock.entities IS
	'The estate: Proxmox hosts and the VMs/containers they run.  slug is type:name.';

-- Attribute keys only the scheduler's probes may write.
CREATE TABLE airlock.scheduler_keys (
	key    text PRIMARY KEY,
	reason text NOT NULL
);
INSERT INTO airlock.scheduler_keys (key, reason) VALUES
	('health', 'health is scheduler-owned; attribute ignored. Use get_health_summary/list_checks to observe it.'),
	('qemu_guest_agent', 'qemu_guest_agent is scheduler-owned (probed with qm agent ping); attribute ignored. Use get_health_summary to observe it.'),
	('container_status', 'container_status is scheduler-owned (probed with pct status); attribute ignored. Use get_health_summary to observe it.'),
	('reachable', 'reachable is scheduler-owned (probed over SSH); attribute ignored. Use get_health_summary to observe it.'),
	('last_probe', 'last_probe is scheduler-owned; attribute ignored. Use get_health_summary to observe it.');

CREATE TABLE airlock.relationships (
	id         bigserial PRIMARY KEY,
	source     text NOT NULL REFERENCES airlock.entities (slug),
	target     text NOT NULL REFERENCES airlock.entities (slug),
	type       text NOT NULL CHECK (type ~ '^[a-z][a-z0-9-]{0,62}$'),
	created_by text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (source, target, type),
	CHECK (source <> target)
);
CREATE INDEX relationships_target ON airlock.relationships (target);

CREATE TABLE airlock.checks (
	entity    text NOT NULL REFERENCES airlock.entities (slug),
	name      text NOT NULL,
	status    text NOT NULL CHECK (status IN ('ok', 'warning', 'failing', 'unknown')),
	detail    text,
	probed_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (entity, name)
);

-- ---------------------------------------------------------------- policy and catalog

CREATE TABLE airlock.policies (
	version   bigserial PRIMARY KEY,
	sha256    text NOT NULL,
	source    text NOT NULL,
	origin    text NOT NULL,
	loaded_at timestamptz NOT NULL DEFAULT now(),
	loaded_by text NOT NULL DEFAULT session_user
);
COMMENT ON TABLE airlock.policies IS
	'Every classifier policy ever ingested; the highest version is in force.';

-- The rules of the policy in force, for operators to read (replaced on ingest).
CREATE TABLE airlock.policy_rules (
	rule_id        text PRIMARY KEY,
	class          text NOT NULL,
	description    text NOT NULL,
	policy_version bigint NOT NULL REFERENCES airlock.policies (version)
);

-- The approval gate per class: how many distinct approvers, how long a
-- request may wait.  Seeded with the defaults; operators change it by seed.
CREATE TABLE airlock.gate_policy (
	class              text PRIMARY KEY CHECK (class IN ('config_mutation', 'destructive')),
	approvals_required integer NOT NULL CHECK (approvals_required BETWEEN 1 AND 5),
	ttl                interval NOT NULL CHECK (ttl > interval '0')
);
INSERT INTO airlock.gate_policy VALUES
	('config_mutation', 1, interval '1 hour'),
	('destructive', 2, interval '1 hour');

CREATE TABLE airlock.tools (
	server  text NOT NULL,
	tool    text NOT NULL,
	verdict text NOT NULL CHECK (verdict IN ('read_only', 'mutating')),
	vm_arg  text,
	PRIMARY KEY (server, tool)
);

-- ---------------------------------------------------------------- the queue

CREATE TABLE airlock.executions (
	id                 bigserial PRIMARY KEY,
	target             text NOT NULL REFERENCES airlock.entities (slug),
	target_type        text NOT NULL,
	command            text NOT NULL CHECK (octet_length(command) BETWEEN 1 AND 65536),
	declared_risk      text CHECK (declared_risk IN ('read_only', 'reversible_low', 'config_mutation', 'destructive')),
	change_id          text CHECK (octet_length(change_id) <= 200),
	action             text CHECK (octet_length(action) <= 500),
	requested_by       text NOT NULL,
	state              text NOT NULL DEFAULT 'received' CHECK (state IN (
	                       'received', 'queued', 'pending_approval', 'approved', 'rejected',
	                       'expired', 'cancelled', 'refused', 'running', 'succeeded', 'failed',
	                       'timed_out', 'outcome_unknown')),
	-- classification (by the worker)
	class              text CHECK (class IN ('read_only', 'reversible_low', 'config_mutation', 'destructive')),
	reasons            jsonb,
	policy_version     bigint REFERENCES airlock.policies (version),
	classifier_version text,
	payload_hash       text,
	approvals_required integer NOT NULL DEFAULT 0,
	rewind_status      text,
	rewind_possible    boolean,
	-- phases
	created_at         timestamptz NOT NULL DEFAULT now(),
	classified_at      timestamptz,
	expires_at         timestamptz,
	decided_at         timestamptz,
	started_at         timestamptz,
	finished_at        timestamptz,
	-- result
	rewind_points      jsonb,
	exit_code          integer,
	signal             integer,
	stdout             bytea,
	stderr             bytea,
	stdout_truncated   boolean,
	stderr_truncated   boolean,
	duration_ms        bigint,
	error              text,
	-- worker lease: a claimed row belongs to claimed_by until lease_until
	attempts           integer NOT NULL DEFAULT 0,
	claimed_by         text,
	lease_until        timestamptz,
	run_after          timestamptz NOT NULL DEFAULT now()
);
-- "Claim the next row": the columns match the claim's ORDER BY.
CREATE INDEX executions_claim ON airlock.executions (run_after, id)
	WHERE state IN ('received', 'queued', 'approved') AND claimed_by IS NULL;
-- "Pending for operators", oldest first.
CREATE INDEX executions_pending ON airlock.executions (created_at, id)
	WHERE state = 'pending_approval';
CREATE INDEX executions_requester ON airlock.executions (requested_by, id);
CREATE INDEX executions_target ON airlock.executions (target, id);
CREATE INDEX executions_running ON airlock.executions (target) WHERE state = 'running';
ALTER TABLE airlock.executions SET (autovacuum_vacuum_scale_factor = 0.0,
	autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0.02);

-- Which state may follow which.  Enforced by a trigger on every update.
CREATE TABLE airlock.transitions (
	from_state text NOT NULL,
	to_state   text NOT NULL,
	PRIMARY KEY (from_state, to_state)
);
INSERT INTO airlock.transitions VALUES
	('received', 'queued'), ('received', 'pending_approval'), ('received', 'refused'),
	('received', 'cancelled'),
	('queued', 'running'), ('queued', 'refused'), ('queued', 'cancelled'),
	('queued', 'pending_approval'),
	('pending_approval', 'approved'), ('pending_approval', 'rejected'),
	('pending_approval', 'expired'), ('pending_approval', 'cancelled'),
	('approved', 'running'), ('approved', 'refused'), ('approved', 'cancelled'),
	('approved', 'pending_approval'),
	('running', 'succeeded'), ('running', 'failed'), ('running', 'timed_out'),
	('running', 'outcome_unknown');

CREATE FUNCTION airlock._check_transition() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	IF NEW.state IS DISTINCT FROM OLD.state AND NOT EXISTS (
		SELECT 1 FROM airlock.transitions WHERE from_state = OLD.state AND to_state = NEW.state)
	THEN
		RAISE EXCEPTION 'execution %: illegal state transition % -> %', OLD.id, OLD.state, NEW.state
			USING ERRCODE = 'AL005';
	END IF;
	IF NEW.command IS DISTINCT FROM OLD.command OR NEW.target IS DISTINCT FROM OLD.target
	   OR NEW.requested_by IS DISTINCT FROM OLD.requested_by THEN
		RAISE EXCEPTION 'execution %: target, command and requester never change', OLD.id
			USING ERRCODE = 'AL005';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER executions_transition BEFORE UPDATE ON airlock.executions
	FOR EACH ROW EXECUTE FUNCTION airlock._check_transition();

CREATE TABLE airlock.approvals (
	id            bigserial PRIMARY KEY,
	execution_id  bigint NOT NULL REFERENCES airlock.executions (id),
	approver      text NOT NULL,
	decision      text NOT NULL CHECK (decision IN ('approve', 'reject')),
	reason        text,
	payload_hash  text NOT NULL,
	rewind_status text,
	at            timestamptz NOT NULL DEFAULT now(),
	UNIQUE (execution_id, approver)
);

-- ---------------------------------------------------------------- history

-- ids are assigned by the chaining trigger, under its lock, so they follow the chain.
CREATE SEQUENCE airlock.execution_events_id_seq;
CREATE TABLE airlock.execution_events (
	id           bigint PRIMARY KEY,
	execution_id bigint NOT NULL REFERENCES airlock.executions (id),
	at           timestamptz NOT NULL DEFAULT clock_timestamp(),
	actor        text NOT NULL,
	from_state   text,
	to_state     text NOT NULL,
	detail       jsonb NOT NULL DEFAULT '{}',
	prev_hash    text NOT NULL,
	hash         text NOT NULL
);
ALTER SEQUENCE airlock.execution_events_id_seq OWNED BY airlock.execution_events.id;
CREATE INDEX execution_events_execution ON airlock.execution_events (execution_id, id);
COMMENT ON TABLE airlock.execution_events IS
	'Append-only history of every transition, hash-chained: hash = sha256(prev_hash | content).';

-- The content an event's hash covers, in one fixed text form.
CREATE FUNCTION airlock._event_hash(e airlock.execution_events) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = airlock, pg_temp AS $$
	SELECT encode(sha256(convert_to(
		e.prev_hash || '|' || e.id || '|' || e.execution_id || '|' ||
		to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' ||
		e.actor || '|' || coalesce(e.from_state, '') || '|' || e.to_state || '|' ||
		e.detail::text, 'UTF8')), 'hex')
$$;

-- Chains each new event to the last one.  The advisory lock serialises
-- writers until commit, so ids follow the chain.
CREATE FUNCTION airlock._chain_event() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	prev text;
BEGIN
	PERFORM pg_advisory_xact_lock(74287730, 1);
	SELECT hash INTO prev FROM airlock.execution_events ORDER BY id DESC LIMIT 1;
	NEW.id := nextval('airlock.execution_events_id_seq');
	NEW.at := clock_timestamp();
	NEW.prev_hash := coalesce(prev, repeat('0', 64));
	NEW.hash := airlock._event_hash(NEW);
	RETURN NEW;
END
$$;
CREATE TRIGGER execution_events_chain BEFORE INSERT ON airlock.execution_events
	FOR EACH ROW EXECUTE FUNCTION airlock._chain_event();

CREATE FUNCTION airlock._append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'execution_events is append-only: % is not allowed', TG_OP
		USING ERRCODE = '42501';
END
$$;
CREATE TRIGGER execution_events_no_update BEFORE UPDATE OR DELETE ON airlock.execution_events
	FOR EACH ROW EXECUTE FUNCTION airlock._append_only();
CREATE TRIGGER execution_events_no_truncate BEFORE TRUNCATE ON airlock.execution_events
	FOR EACH STATEMENT EXECUTE FUNCTION airlock._append_only();

-- ---------------------------------------------------------------- internal helpers

CREATE FUNCTION airlock._is_operator() RETURNS boolean
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT pg_has_role(session_user, 'airlock_operator', 'MEMBER')
$$;

CREATE FUNCTION airlock._is_worker() RETURNS boolean
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT pg_has_role(session_user, 'airlock_worker', 'MEMBER')
$$;

-- Records one event and tells listeners; the caller has already updated the row.
CREATE FUNCTION airlock._event(exec_id bigint, from_state text, to_state text, detail jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	INSERT INTO airlock.execution_events (id, execution_id, actor, from_state, to_state, detail, prev_hash, hash)
	VALUES (0, exec_id, session_user, from_state, to_state, coalesce(detail, '{}'), '', '');
	IF from_state IS DISTINCT FROM to_state THEN
		PERFORM pg_notify('airlock_state', exec_id || ' ' || to_state);
	END IF;
END
$$;

-- Moves a row from one of `from_states` to `to_state` and records it.
-- Returns false (and changes nothing) when the row is not in from_states.
CREATE FUNCTION airlock._transition(exec_id bigint, from_states text[], to_state text, detail jsonb)
RETURNS boolean LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	old_state text;
BEGIN
	SELECT state INTO old_state FROM airlock.executions WHERE id = exec_id FOR UPDATE;
	IF NOT FOUND OR NOT (old_state = ANY (from_states)) THEN
		RETURN false;
	END IF;
	UPDATE airlock.executions SET state = to_state WHERE id = exec_id;
	PERFORM airlock._event(exec_id, old_state, to_state, detail);
	RETURN true;
END
$$;

-- What the agent should do now, per state.  Every non-final answer says that
-- going around airlock is not an option.
CREATE FUNCTION airlock._next_step(e airlock.executions) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT CASE e.state
	WHEN 'received' THEN
		'airlock is classifying this request. Wait for it (get_execution, or run with wait_seconds). '
		|| 'Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'queued' THEN
		'Queued to run without approval. Wait for the result. '
		|| 'Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'pending_approval' THEN
		'Waiting for operator approval since ' || coalesce(to_char(e.classified_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'), 'now')
		|| ', expires at ' || coalesce(to_char(e.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'), 'no expiry')
		|| '. Wait, or ask your operator to review execution ' || e.id || ' (airlock pending; airlock approve '
		|| e.id || '). Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'approved' THEN
		'Approved; it will run shortly. Wait for the result. '
		|| 'Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'running' THEN
		'Running since ' || coalesce(to_char(e.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'), 'now')
		|| '. Wait for the result. Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'succeeded' THEN 'Finished with exit code 0. Read stdout and stderr.'
	WHEN 'failed' THEN 'Finished and failed (see exit_code, signal, stderr, error). Decide with your operator before retrying.'
	WHEN 'timed_out' THEN 'Stopped at airlock''s deadline; it may have partly taken effect. Check the target read-only before retrying.'
	WHEN 'rejected' THEN
		'Rejected by an operator: ' || coalesce((SELECT a.reason FROM airlock.approvals a
			WHERE a.execution_id = e.id AND a.decision = 'reject' ORDER BY a.at DESC LIMIT 1), 'no reason given')
		|| '. Ask your operator what should change; do not run it another way.'
	WHEN 'expired' THEN
		'No operator decided before it expired. Ask your operator before submitting it again; do not run it another way.'
	WHEN 'cancelled' THEN 'Cancelled; nothing ran.'
	WHEN 'refused' THEN
		'Refused before anything ran: ' || coalesce(e.error, 'see the history') ||
		' Fix the cause or ask your operator; do not run it another way.'
	WHEN 'outcome_unknown' THEN
		'The worker or its link died while the command was running: it may or may not have taken effect. '
		|| 'It will not be re-run automatically. Ask your operator to check the target before doing anything else.'
	END
$$;

CREATE FUNCTION airlock._output_text(b bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = airlock, pg_temp AS $$
BEGIN
	IF b IS NULL THEN
		RETURN NULL;
	END IF;
	RETURN convert_from(b, 'UTF8');
EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
	-- Not UTF-8: show it as escaped bytes rather than lose it.
	RETURN 'base64:' || encode(b, 'base64');
END
$$;

CREATE FUNCTION airlock._execution_json(e airlock.executions, with_output boolean) RETURNS jsonb
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
		'exit_code', e.exit_code, 'signal', e.signal,
		'stdout', CASE WHEN with_output THEN airlock._output_text(e.stdout) END,
		'stderr', CASE WHEN with_output THEN airlock._output_text(e.stderr) END,
		'stdout_truncated', e.stdout_truncated, 'stderr_truncated', e.stderr_truncated,
		'duration_ms', e.duration_ms, 'error', e.error,
		'next_step', airlock._next_step(e)))
$$;

-- ---------------------------------------------------------------- agent API

CREATE FUNCTION airlock.run(target text, command text, declared_risk text DEFAULT NULL,
			    change_id text DEFAULT NULL, action text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ent airlock.entities;
	new_id bigint;
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
	IF ent.type = 'vm' AND coalesce(ent.attributes ->> 'qemu_guest_agent', '') <> 'running' THEN
		RAISE EXCEPTION 'run on % blocked: QEMU guest agent is not running (qm guest exec unavailable). Start the agent first or use a different target.', ent.slug
			USING ERRCODE = 'AL003';
	END IF;
	IF ent.type = 'lxc' AND ent.attributes ->> 'container_status' = 'stopped' THEN
		RAISE EXCEPTION 'run on % blocked: container is not running (pct exec unavailable). Start the container first or use a different target.', ent.slug
			USING ERRCODE = 'AL004';
	END IF;

	INSERT INTO airlock.executions (target, target_type, command, declared_risk, change_id, action, requested_by)
	VALUES (ent.slug, ent.type, command, declared_risk, nullif(change_id, ''), nullif(action, ''), session_user)
	RETURNING id INTO new_id;
	PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
		'declared_risk', declared_risk, 'change_id', change_id, 'action', action));
	PERFORM pg_notify('airlock_work', new_id::text);
	RETURN new_id;
END
$$;

CREATE FUNCTION airlock.get_execution(id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	SELECT * INTO e FROM airlock.executions x WHERE x.id = get_execution.id;
	IF NOT FOUND OR (e.requested_by <> session_user AND NOT airlock._is_operator()
			 AND NOT airlock._is_worker()) THEN
		RAISE EXCEPTION 'execution % not found (an agent sees only its own requests)', get_execution.id
			USING ERRCODE = 'AL007';
	END IF;
	RETURN airlock._execution_json(e, true);
END
$$;

CREATE FUNCTION airlock.list_executions(state text DEFAULT NULL, target text DEFAULT NULL,
					lim integer DEFAULT 50, before_id bigint DEFAULT NULL)
RETURNS SETOF jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	see_all boolean := airlock._is_operator() OR airlock._is_worker();
BEGIN
	IF lim IS NULL OR lim < 1 OR lim > 500 THEN
		RAISE EXCEPTION 'list_executions: limit must be between 1 and 500' USING ERRCODE = 'AL002';
	END IF;
	IF list_executions.state IS NOT NULL AND NOT EXISTS (
		SELECT 1 FROM airlock.transitions t WHERE t.from_state = list_executions.state OR t.to_state = list_executions.state) THEN
		RAISE EXCEPTION 'list_executions: unknown state "%"', list_executions.state USING ERRCODE = 'AL002';
	END IF;
	RETURN QUERY
		SELECT airlock._execution_json(e, false) FROM airlock.executions e
		WHERE (see_all OR e.requested_by = session_user)
		  AND (list_executions.state IS NULL OR e.state = list_executions.state)
		  AND (list_executions.target IS NULL OR e.target = list_executions.target)
		  AND (before_id IS NULL OR e.id < before_id)
		ORDER BY e.id DESC LIMIT lim;
END
$$;

CREATE FUNCTION airlock.cancel(id bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	SELECT * INTO e FROM airlock.executions x WHERE x.id = cancel.id FOR UPDATE;
	IF NOT FOUND OR (e.requested_by <> session_user AND NOT airlock._is_operator()) THEN
		RAISE EXCEPTION 'execution % not found (you may cancel your own requests; operators may cancel any)', cancel.id
			USING ERRCODE = 'AL007';
	END IF;
	IF e.state NOT IN ('received', 'queued', 'pending_approval', 'approved') THEN
		RAISE EXCEPTION 'execution % is %: only a request that has not started running can be cancelled', e.id, e.state
			USING ERRCODE = 'AL005';
	END IF;
	UPDATE airlock.executions x SET state = 'cancelled', finished_at = now(), claimed_by = NULL, lease_until = NULL
	WHERE x.id = e.id;
	PERFORM airlock._event(e.id, e.state, 'cancelled', jsonb_build_object('by', session_user));
	RETURN 'cancelled';
END
$$;

CREATE FUNCTION airlock.update_entity_attributes(slug text, attributes jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	merged text[] := '{}';
	dropped jsonb := '[]';
	keep jsonb := '{}';
	k text;
	v jsonb;
	why text;
	result jsonb;
BEGIN
	IF attributes IS NULL OR jsonb_typeof(attributes) <> 'object' THEN
		RAISE EXCEPTION 'update_entity_attributes: attributes must be a JSON object' USING ERRCODE = 'AL002';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = update_entity_attributes.slug) THEN
		RAISE EXCEPTION 'update_entity_attributes: unknown entity "%"', update_entity_attributes.slug
			USING ERRCODE = 'AL001';
	END IF;
	FOR k, v IN SELECT * FROM jsonb_each(attributes) ORDER BY 1 LOOP
		SELECT reason INTO why FROM airlock.scheduler_keys WHERE key = k;
		IF FOUND THEN
			dropped := dropped || jsonb_build_array(jsonb_build_object('key', k, 'reason', why));
		ELSE
			keep := keep || jsonb_build_object(k, v);
			merged := merged || k;
		END IF;
	END LOOP;
	UPDATE airlock.entities e SET attributes = e.attributes || keep,
		updated_at = CASE WHEN keep = '{}' THEN e.updated_at ELSE now() END
	WHERE e.slug = update_entity_attributes.slug
	RETURNING e.attributes INTO result;
	RETURN jsonb_build_object('slug', update_entity_attributes.slug, 'merged', to_jsonb(merged),
				  'dropped', dropped, 'attributes', result);
END
$$;

CREATE FUNCTION airlock.create_relationship(source text, target text, type text) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	created boolean;
BEGIN
	IF type IS NULL OR type !~ '^[a-z][a-z0-9-]{0,62}$' THEN
		RAISE EXCEPTION 'create_relationship: type "%" must be lowercase words joined by dashes, such as depends-on', type
			USING ERRCODE = 'AL002';
	END IF;
	IF source = target THEN
		RAISE EXCEPTION 'create_relationship: an entity cannot relate to itself (%)', source USING ERRCODE = 'AL002';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM airlock.entities WHERE slug = source) THEN
		RAISE EXCEPTION 'create_relationship: unknown entity "%"', source USING ERRCODE = 'AL001';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM airlock.entities WHERE slug = target) THEN
		RAISE EXCEPTION 'create_relationship: unknown entity "%"', target USING ERRCODE = 'AL001';
	END IF;
	INSERT INTO airlock.relationships (source, target, type, created_by)
	VALUES (source, target, type, session_user)
	ON CONFLICT DO NOTHING;
	GET DIAGNOSTICS created = ROW_COUNT;
	RETURN jsonb_build_object('source', source, 'target', target, 'type', type, 'created', created);
END
$$;

CREATE FUNCTION airlock.get_relations(slug text) RETURNS SETOF jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = get_relations.slug) THEN
		RAISE EXCEPTION 'get_relations: unknown entity "%"', get_relations.slug USING ERRCODE = 'AL001';
	END IF;
	RETURN QUERY
		SELECT jsonb_build_object('source', r.source, 'target', r.target, 'type', r.type,
			'created_by', r.created_by, 'created_at', r.created_at,
			'direction', CASE WHEN r.source = get_relations.slug THEN 'out' ELSE 'in' END)
		FROM airlock.relationships r
		WHERE r.source = get_relations.slug OR r.target = get_relations.slug
		ORDER BY r.id;
END
$$;

CREATE FUNCTION airlock.get_health_summary(slug text DEFAULT NULL) RETURNS SETOF jsonb
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
			'checks_ok', (SELECT count(*) FROM airlock.checks c WHERE c.entity = e.slug AND c.status = 'ok'),
			'checks_failing', (SELECT count(*) FROM airlock.checks c WHERE c.entity = e.slug AND c.status IN ('failing', 'warning')),
			'last_probe', (SELECT max(c.probed_at) FROM airlock.checks c WHERE c.entity = e.slug)))
		FROM airlock.entities e
		WHERE get_health_summary.slug IS NULL OR e.slug = get_health_summary.slug
		ORDER BY e.slug;
END
$$;

CREATE FUNCTION airlock.list_checks(slug text DEFAULT NULL) RETURNS SETOF jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF slug IS NOT NULL AND NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = list_checks.slug) THEN
		RAISE EXCEPTION 'list_checks: unknown entity "%"', slug USING ERRCODE = 'AL001';
	END IF;
	RETURN QUERY
		SELECT jsonb_strip_nulls(jsonb_build_object('slug', c.entity, 'name', c.name, 'status', c.status,
			'detail', c.detail, 'probed_at', c.probed_at))
		FROM airlock.checks c
		WHERE list_checks.slug IS NULL OR c.entity = list_checks.slug
		ORDER BY c.entity, c.name;
END
$$;

CREATE FUNCTION airlock.check_tool(server text, tool text, vm text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	t airlock.tools;
	subject text := coalesce(nullif(vm, ''), 'the guest');
BEGIN
	IF server IS NULL OR server = '' OR tool IS NULL OR tool = '' THEN
		RAISE EXCEPTION 'check_tool: server and tool are required' USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO t FROM airlock.tools x WHERE x.server = check_tool.server AND x.tool = check_tool.tool;
	IF NOT FOUND THEN
		RETURN jsonb_build_object('server', server, 'tool', tool, 'verdict', 'unknown',
			'advice', 'Ask the human. Nobody has classified ' || server || '/' || tool
			|| '; unknown does not mean safe. Ask: "' || server || '/' || tool
			|| ' is not a known read-only command. It may change ' || subject
			|| '. Insert a Zerto tagged checkpoint first so this is reversible?" If they say yes, guard first, then run it; '
			|| 'if they say no, run it and tell them plainly that Zerto cannot rewind it.');
	END IF;
	IF t.verdict = 'read_only' THEN
		RETURN jsonb_build_object('server', server, 'tool', tool, 'verdict', 'read_only',
			'advice', 'Run the tool. It is known to be read-only; no checkpoint is needed.');
	END IF;
	RETURN jsonb_build_object('server', server, 'tool', tool, 'verdict', 'mutating', 'vm_arg', t.vm_arg,
		'advice', 'Guard first. ' || server || '/' || tool || ' is known to change ' || subject
		|| ': insert a tagged checkpoint before calling it, and stop if the checkpoint fails. Do not ask; do not skip the guard.');
END
$$;

-- ---------------------------------------------------------------- operator API

CREATE FUNCTION airlock.approve(id bigint, reason text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	votes integer;
BEGIN
	SELECT * INTO e FROM airlock.executions x WHERE x.id = approve.id FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'execution % not found', approve.id USING ERRCODE = 'AL007';
	END IF;
	IF e.state <> 'pending_approval' THEN
		RAISE EXCEPTION 'execution % is %, not pending_approval: there is nothing to approve', e.id, e.state
			USING ERRCODE = 'AL005';
	END IF;
	IF e.requested_by = session_user THEN
		RAISE EXCEPTION 'execution % was requested by you (%): nobody may approve their own request. Ask another operator.', e.id, session_user
			USING ERRCODE = 'AL006';
	END IF;
	IF e.expires_at IS NOT NULL AND e.expires_at <= now() THEN
		UPDATE airlock.executions x SET state = 'expired', finished_at = now() WHERE x.id = e.id;
		PERFORM airlock._event(e.id, e.state, 'expired', jsonb_build_object('expired_at', e.expires_at,
			'noticed_by', 'approve'));
		RETURN 'expired';
	END IF;
	IF e.payload_hash IS NULL THEN
		RAISE EXCEPTION 'execution % has no payload hash; it was not classified by a worker', e.id
			USING ERRCODE = 'AL008';
	END IF;
	IF EXISTS (SELECT 1 FROM airlock.approvals a WHERE a.execution_id = e.id AND a.approver = session_user
		   AND a.payload_hash = e.payload_hash) THEN
		RAISE EXCEPTION 'execution %: you already approved it; it needs a different approver', e.id
			USING ERRCODE = 'AL005';
	END IF;
	INSERT INTO airlock.approvals (execution_id, approver, decision, reason, payload_hash, rewind_status)
	VALUES (e.id, session_user, 'approve', reason, e.payload_hash, e.rewind_status)
	ON CONFLICT (execution_id, approver) DO UPDATE
		SET decision = 'approve', reason = EXCLUDED.reason, payload_hash = EXCLUDED.payload_hash,
		    rewind_status = EXCLUDED.rewind_status, at = now();
	SELECT count(*) INTO votes FROM airlock.approvals a
	WHERE a.execution_id = e.id AND a.decision = 'approve' AND a.payload_hash = e.payload_hash;
	IF votes < greatest(e.approvals_required, 1) THEN
		PERFORM airlock._event(e.id, e.state, e.state, jsonb_build_object('vote', 'approve',
			'reason', reason, 'approvals', votes, 'required', e.approvals_required,
			'payload_hash', e.payload_hash));
		RETURN 'pending_approval';
	END IF;
	UPDATE airlock.executions x SET state = 'approved', decided_at = now() WHERE x.id = e.id;
	PERFORM airlock._event(e.id, e.state, 'approved', jsonb_build_object('reason', reason,
		'approvals', votes, 'required', e.approvals_required, 'payload_hash', e.payload_hash,
		'rewind_status', e.rewind_status));
	PERFORM pg_notify('airlock_work', e.id::text);
	RETURN 'approved';
END
$$;

CREATE FUNCTION airlock.reject(id bigint, reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'reject: a reason is required; it is sent back to the requester' USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO e FROM airlock.executions x WHERE x.id = reject.id FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'execution % not found', reject.id USING ERRCODE = 'AL007';
	END IF;
	IF e.state <> 'pending_approval' THEN
		RAISE EXCEPTION 'execution % is %, not pending_approval: there is nothing to reject', e.id, e.state
			USING ERRCODE = 'AL005';
	END IF;
	IF e.requested_by = session_user THEN
		RAISE EXCEPTION 'execution % was requested by you: use cancel to withdraw your own request', e.id
			USING ERRCODE = 'AL006';
	END IF;
	INSERT INTO airlock.approvals (execution_id, approver, decision, reason, payload_hash, rewind_status)
	VALUES (e.id, session_user, 'reject', reason, coalesce(e.payload_hash, ''), e.rewind_status)
	ON CONFLICT (execution_id, approver) DO UPDATE
		SET decision = 'reject', reason = EXCLUDED.reason, at = now();
	UPDATE airlock.executions x SET state = 'rejected', decided_at = now(), finished_at = now() WHERE x.id = e.id;
	PERFORM airlock._event(e.id, e.state, 'rejected', jsonb_build_object('reason', reason));
	RETURN 'rejected';
END
$$;

-- Pending requests past their TTL become 'expired'.  Returns how many.
CREATE FUNCTION airlock.expire_pending() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e record;
	n integer := 0;
BEGIN
	FOR e IN SELECT id, expires_at FROM airlock.executions
		 WHERE state = 'pending_approval' AND expires_at <= now()
		 ORDER BY id FOR UPDATE SKIP LOCKED LOOP
		UPDATE airlock.executions SET state = 'expired', finished_at = now() WHERE id = e.id;
		PERFORM airlock._event(e.id, 'pending_approval', 'expired', jsonb_build_object('expired_at', e.expires_at));
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

-- Walks the hash chain.  first_broken is NULL when every link holds.
CREATE FUNCTION airlock.audit_verify(OUT checked bigint, OUT first_broken bigint, OUT detail text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ev airlock.execution_events;
	prev text := repeat('0', 64);
BEGIN
	checked := 0;
	FOR ev IN SELECT * FROM airlock.execution_events ORDER BY id LOOP
		IF ev.prev_hash <> prev THEN
			first_broken := ev.id;
			detail := format('event %s: prev_hash does not match the hash of the event before it (a row was removed or reordered)', ev.id);
			RETURN;
		END IF;
		IF ev.hash <> airlock._event_hash(ev) THEN
			first_broken := ev.id;
			detail := format('event %s: content does not match its hash (the row was altered)', ev.id);
			RETURN;
		END IF;
		prev := ev.hash;
		checked := checked + 1;
	END LOOP;
END
$$;

CREATE VIEW airlock.pending AS
	SELECT e.id, e.target, e.target_type, e.command, e.class, e.reasons, e.requested_by,
	       e.change_id, e.action, e.created_at, e.classified_at, e.expires_at,
	       now() - e.created_at AS age, e.expires_at - now() AS expires_in,
	       e.approvals_required,
	       (SELECT count(*) FROM airlock.approvals a WHERE a.execution_id = e.id
		AND a.decision = 'approve' AND a.payload_hash = e.payload_hash) AS approvals,
	       e.rewind_status, e.rewind_possible
	FROM airlock.executions e
	WHERE e.state = 'pending_approval'
	ORDER BY e.created_at, e.id;

CREATE VIEW airlock.history AS
	SELECT ev.execution_id, ev.id AS event_id, ev.at, ev.actor, ev.from_state, ev.to_state, ev.detail
	FROM airlock.execution_events ev;

-- ---------------------------------------------------------------- scheduler API

-- Writes probed facts: scheduler-owned attribute keys and check rows.
-- attributes: {"qemu_guest_agent": "running", ...} (scheduler-owned keys only)
-- checks: [{"name": "...", "status": "ok|warning|failing|unknown", "detail": "..."}]
CREATE FUNCTION airlock.record_probe(slug text, attributes jsonb, checks jsonb DEFAULT '[]')
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	k text;
	c jsonb;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = record_probe.slug) THEN
		RAISE EXCEPTION 'record_probe: unknown entity "%"', slug USING ERRCODE = 'AL001';
	END IF;
	IF attributes IS NULL OR jsonb_typeof(attributes) <> 'object' THEN
		RAISE EXCEPTION 'record_probe: attributes must be a JSON object' USING ERRCODE = 'AL002';
	END IF;
	FOR k IN SELECT jsonb_object_keys(attributes) LOOP
		IF NOT EXISTS (SELECT 1 FROM airlock.scheduler_keys s WHERE s.key = k) THEN
			RAISE EXCEPTION 'record_probe: "%" is not a scheduler-owned key', k USING ERRCODE = 'AL002';
		END IF;
	END LOOP;
	IF checks IS NULL OR jsonb_typeof(checks) <> 'array' THEN
		RAISE EXCEPTION 'record_probe: checks must be a JSON array' USING ERRCODE = 'AL002';
	END IF;
	UPDATE airlock.entities e SET attributes = e.attributes || record_probe.attributes, updated_at = now()
	WHERE e.slug = record_probe.slug AND NOT (e.attributes @> record_probe.attributes);
	FOR c IN SELECT * FROM jsonb_array_elements(checks) LOOP
		INSERT INTO airlock.checks (entity, name, status, detail, probed_at)
		VALUES (slug, c ->> 'name', c ->> 'status', c ->> 'detail', now())
		ON CONFLICT (entity, name) DO UPDATE
			SET status = EXCLUDED.status, detail = EXCLUDED.detail, probed_at = EXCLUDED.probed_at;
	END LOOP;
END
$$;

-- ---------------------------------------------------------------- seed API (administrators only)

-- Ingests a policy document.  A document identical to the one in force
-- changes nothing; otherwise it becomes a new version, its rules replace the
-- listed ones, and workers are told.  Returns the version in force.
CREATE FUNCTION airlock.seed_policy(source text, origin text, rules jsonb) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	digest text := encode(sha256(convert_to(source, 'UTF8')), 'hex');
	cur airlock.policies;
	v bigint;
BEGIN
	SELECT * INTO cur FROM airlock.policies ORDER BY version DESC LIMIT 1;
	IF FOUND AND cur.sha256 = digest THEN
		RETURN cur.version;
	END IF;
	INSERT INTO airlock.policies (sha256, source, origin) VALUES (digest, source, origin)
	RETURNING version INTO v;
	DELETE FROM airlock.policy_rules;
	INSERT INTO airlock.policy_rules (rule_id, class, description, policy_version)
	SELECT r ->> 'id', r ->> 'class', coalesce(r ->> 'description', ''), v
	FROM jsonb_array_elements(rules) r;
	PERFORM pg_notify('airlock_policy', v::text);
	RETURN v;
END
$$;

-- Replaces the tool catalog with `tools` ([{server, tool, verdict, vm_arg}]).
-- Returns the number of rows that changed.
CREATE FUNCTION airlock.seed_tools(tools jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	n integer := 0;
	m integer;
BEGIN
	CREATE TEMP TABLE incoming ON COMMIT DROP AS
		SELECT t ->> 'server' AS server, t ->> 'tool' AS tool, t ->> 'verdict' AS verdict,
		       t ->> 'vm_arg' AS vm_arg
		FROM jsonb_array_elements(tools) t;
	DELETE FROM airlock.tools x WHERE NOT EXISTS (
		SELECT 1 FROM incoming i WHERE i.server = x.server AND i.tool = x.tool);
	GET DIAGNOSTICS m = ROW_COUNT;
	n := n + m;
	INSERT INTO airlock.tools (server, tool, verdict, vm_arg)
	SELECT server, tool, verdict, vm_arg FROM incoming
	ON CONFLICT (server, tool) DO UPDATE SET verdict = EXCLUDED.verdict, vm_arg = EXCLUDED.vm_arg
	WHERE (airlock.tools.verdict, airlock.tools.vm_arg) IS DISTINCT FROM (EXCLUDED.verdict, EXCLUDED.vm_arg);
	GET DIAGNOSTICS m = ROW_COUNT;
	n := n + m;
	DROP TABLE incoming;
	RETURN n;
END
$$;

-- Upserts entities and relationships from an inventory document
-- ({"entities": [...], "relationships": [...]}).  Hosts first, so guests can
-- name their node.  Attributes in the inventory are merged over probed ones
-- only where the inventory sets them.  Returns the number of rows changed.
CREATE FUNCTION airlock.seed_inventory(inventory jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	n integer := 0;
	m integer;
	e jsonb;
	r jsonb;
BEGIN
	FOR e IN SELECT x FROM jsonb_array_elements(coalesce(inventory -> 'entities', '[]')) x
		 ORDER BY (x ->> 'type') <> 'proxmox-host' LOOP
		INSERT INTO airlock.entities AS t (slug, type, node, vmid, address, port, ssh_user,
			host_key_fingerprint, zerto_vm_identifier, attributes)
		VALUES (e ->> 'slug', e ->> 'type', e ->> 'node', (e ->> 'vmid')::integer, e ->> 'address',
			(e ->> 'port')::integer, e ->> 'ssh_user', e ->> 'host_key_fingerprint',
			e ->> 'zerto_vm_identifier', coalesce(e -> 'attributes', '{}'))
		ON CONFLICT (slug) DO UPDATE SET type = EXCLUDED.type, node = EXCLUDED.node,
			vmid = EXCLUDED.vmid, address = EXCLUDED.address, port = EXCLUDED.port,
			ssh_user = EXCLUDED.ssh_user, host_key_fingerprint = EXCLUDED.host_key_fingerprint,
			zerto_vm_identifier = EXCLUDED.zerto_vm_identifier,
			attributes = t.attributes || EXCLUDED.attributes, updated_at = now()
		WHERE (t.type, t.node, t.vmid, t.address, t.port, t.ssh_user, t.host_key_fingerprint,
		       t.zerto_vm_identifier) IS DISTINCT FROM
		      (EXCLUDED.type, EXCLUDED.node, EXCLUDED.vmid, EXCLUDED.address, EXCLUDED.port,
		       EXCLUDED.ssh_user, EXCLUDED.host_key_fingerprint, EXCLUDED.zerto_vm_identifier)
		   OR NOT (t.attributes @> EXCLUDED.attributes);
		GET DIAGNOSTICS m = ROW_COUNT;
		n := n + m;
	END LOOP;
	FOR r IN SELECT x FROM jsonb_array_elements(coalesce(inventory -> 'relationships', '[]')) x LOOP
		INSERT INTO airlock.relationships (source, target, type, created_by)
		VALUES (r ->> 'source', r ->> 'target', r ->> 'type', session_user)
		ON CONFLICT DO NOTHING;
		GET DIAGNOSTICS m = ROW_COUNT;
		n := n + m;
	END LOOP;
	RETURN n;
END
$$;

-- ---------------------------------------------------------------- ownership and grants

-- Gives every airlock table, view and function not yet owned by airlock_owner
-- to it, and takes EXECUTE on those functions away from PUBLIC.  Each
-- migration calls it after creating objects (as the administrator who runs
-- `airlock migrate`), so no migration writes the loop again.
CREATE FUNCTION airlock._secure_new_objects() RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	obj record;
BEGIN
	FOR obj IN SELECT c.oid::regclass::text AS name, c.relkind FROM pg_class c
		   JOIN pg_namespace n ON n.oid = c.relnamespace
		   WHERE n.nspname = 'airlock' AND c.relkind IN ('r', 'v')
		     AND c.relname <> 'schema_migrations'
		     AND pg_get_userbyid(c.relowner) <> 'airlock_owner' LOOP
		EXECUTE format('ALTER %s %s OWNER TO airlock_owner',
			CASE obj.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, obj.name);
	END LOOP;
	FOR obj IN SELECT p.oid::regprocedure::text AS sig FROM pg_proc p
		   JOIN pg_namespace n ON n.oid = p.pronamespace
		   WHERE n.nspname = 'airlock' AND pg_get_userbyid(p.proowner) <> 'airlock_owner' LOOP
		EXECUTE format('ALTER FUNCTION %s OWNER TO airlock_owner', obj.sig);
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', obj.sig);
	END LOOP;
END
$$;
SELECT airlock._secure_new_objects();
GRANT USAGE ON SCHEMA airlock TO airlock_owner;

GRANT EXECUTE ON FUNCTION
	airlock.run(text, text, text, text, text),
	airlock.get_execution(bigint),
	airlock.list_executions(text, text, integer, bigint),
	airlock.cancel(bigint),
	airlock.update_entity_attributes(text, jsonb),
	airlock.create_relationship(text, text, text),
	airlock.get_relations(text),
	airlock.get_health_summary(text),
	airlock.list_checks(text),
	airlock.check_tool(text, text, text)
TO airlock_agent, airlock_operator;

GRANT EXECUTE ON FUNCTION
	airlock.approve(bigint, text),
	airlock.reject(bigint, text),
	airlock.audit_verify()
TO airlock_operator;

GRANT EXECUTE ON FUNCTION
	airlock.get_execution(bigint),
	airlock.list_executions(text, text, integer, bigint),
	airlock.expire_pending(),
	airlock.audit_verify()
TO airlock_worker;

GRANT EXECUTE ON FUNCTION airlock.record_probe(text, jsonb, jsonb) TO airlock_scheduler;

GRANT SELECT ON airlock.entities, airlock.relationships, airlock.checks, airlock.tools,
	airlock.policy_rules
TO airlock_agent;
GRANT SELECT ON ALL TABLES IN SCHEMA airlock TO airlock_operator, airlock_worker;
GRANT SELECT ON airlock.entities, airlock.checks TO airlock_scheduler;
