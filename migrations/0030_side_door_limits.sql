-- 0030_side_door_limits.sql -- the agent's SQL door, limited everywhere; each
-- agent's scope; what the agents' hosts report about the side door.
--
-- * Door limits (gate.yaml `door_limits:`): how many destinations one
--   hook_match call may ask about and how many per minute; the size and rate
--   of hook events and host-check reports; tool requests per minute and
--   pending; guards per minute; attribute updates and new relationships per
--   minute.  Over a limit: AL010, and nothing is written.
-- * A guard on a VM within one checkpoint cadence of the last confirmed
--   checkpoint of that VM reuses it instead of inserting another.
-- * Scopes (gate.yaml `scopes:`): an agent (a login glob) may act on the
--   targets its scope names (slug globs, entity types) up to a highest
--   class.  A request outside is refused before its row is written (AL020);
--   a command the worker classifies above the ceiling is refused before
--   anything runs; the agent's reads (hook_match, relations, health, checks,
--   executions, the entity tables) answer only inside its scope.  No scope:
--   everything, as before.
-- * Agents read only their own tool requests.
-- * What agents' hosts report (hook denials and asks, `airlock hook --check`
--   results) is kept as reported, marked as not verified, and announced to
--   operators at most once per host per interval.
--
-- New SQLSTATE:
--   AL020  outside the agent's scope (gate.yaml scopes); nothing was written

-- ---------------------------------------------------------------- the door's limits

CREATE TABLE airlock.gate_door_limits (
	one                          boolean PRIMARY KEY DEFAULT true CHECK (one),
	hook_match_candidates        integer NOT NULL CHECK (hook_match_candidates BETWEEN 1 AND 256),
	hook_match_per_minute        integer NOT NULL CHECK (hook_match_per_minute BETWEEN 1 AND 100000),
	report_bytes                 integer NOT NULL CHECK (report_bytes BETWEEN 1024 AND 1048576),
	hook_events_per_minute       integer NOT NULL CHECK (hook_events_per_minute BETWEEN 1 AND 100000),
	host_checks_per_minute       integer NOT NULL CHECK (host_checks_per_minute BETWEEN 1 AND 100000),
	tool_requests_per_minute     integer NOT NULL CHECK (tool_requests_per_minute BETWEEN 1 AND 100000),
	tool_requests_pending        integer NOT NULL CHECK (tool_requests_pending BETWEEN 1 AND 100000),
	guards_per_minute            integer NOT NULL CHECK (guards_per_minute BETWEEN 1 AND 100000),
	attribute_updates_per_minute integer NOT NULL CHECK (attribute_updates_per_minute BETWEEN 1 AND 100000),
	relationships_per_minute     integer NOT NULL CHECK (relationships_per_minute BETWEEN 1 AND 100000),
	gate_version                 bigint REFERENCES airlock.gate_policies (version)
);
COMMENT ON TABLE airlock.gate_door_limits IS
	'The flood limits of the agent''s other SQL functions (gate.yaml door_limits), of the gate version in force.';

-- Each agent's scope (gate.yaml scopes), first match by position.  NULL
-- targets or target_types: any; NULL max_class: destructive (any).
CREATE TABLE airlock.gate_scopes (
	position     integer PRIMARY KEY,
	agent        text NOT NULL,
	targets      text[],
	target_types text[] CHECK (target_types <@ ARRAY['proxmox-host', 'vm', 'lxc']),
	max_class    text CHECK (max_class IN ('read_only', 'reversible_low', 'config_mutation', 'destructive')),
	gate_version bigint NOT NULL REFERENCES airlock.gate_policies (version)
);
COMMENT ON TABLE airlock.gate_scopes IS
	'What each agent (a login glob) may act on and the highest class it may request (gate.yaml scopes), first match wins.';

-- The defaults, as gate.yaml documents them, for a document that has no
-- door_limits (one ingested before this migration, or the migration's own).
CREATE FUNCTION airlock._door_defaults() RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
	SELECT '{"hook_match_candidates": 64, "hook_match_per_minute": 300, "report_bytes": 16384,
		 "hook_events_per_minute": 60, "host_checks_per_minute": 6,
		 "tool_requests_per_minute": 5, "tool_requests_pending": 20, "guards_per_minute": 10,
		 "attribute_updates_per_minute": 60, "relationships_per_minute": 60}'::jsonb
$$;

-- Puts a gate policy's door_limits and scopes in force.  A trigger on the
-- versions table calls it, so whatever ingests a gate policy (seed_gate)
-- puts these in force in the same transaction, without knowing them.
CREATE FUNCTION airlock._gate_apply_door() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	l jsonb := airlock._door_defaults() || coalesce(NEW.document -> 'door_limits', '{}');
	s jsonb;
	pos integer := 0;
BEGIN
	IF jsonb_typeof(l) IS DISTINCT FROM 'object'
	   OR jsonb_typeof(coalesce(NEW.document -> 'scopes', '[]')) <> 'array' THEN
		RAISE EXCEPTION 'gate policy: "door_limits" must be an object and "scopes" a list'
			USING ERRCODE = 'AL002';
	END IF;
	DELETE FROM airlock.gate_door_limits;
	DELETE FROM airlock.gate_scopes;
	INSERT INTO airlock.gate_door_limits (hook_match_candidates, hook_match_per_minute, report_bytes,
		hook_events_per_minute, host_checks_per_minute, tool_requests_per_minute,
		tool_requests_pending, guards_per_minute, attribute_updates_per_minute,
		relationships_per_minute, gate_version)
	VALUES ((l ->> 'hook_match_candidates')::integer, (l ->> 'hook_match_per_minute')::integer,
		(l ->> 'report_bytes')::integer, (l ->> 'hook_events_per_minute')::integer,
		(l ->> 'host_checks_per_minute')::integer, (l ->> 'tool_requests_per_minute')::integer,
		(l ->> 'tool_requests_pending')::integer, (l ->> 'guards_per_minute')::integer,
		(l ->> 'attribute_updates_per_minute')::integer, (l ->> 'relationships_per_minute')::integer,
		NEW.version);
	FOR s IN SELECT x FROM jsonb_array_elements(coalesce(NEW.document -> 'scopes', '[]')) x LOOP
		pos := pos + 1;
		IF jsonb_typeof(s) <> 'object' OR jsonb_typeof(s -> 'agent') IS DISTINCT FROM 'string' THEN
			RAISE EXCEPTION 'gate policy: scope % needs an "agent" glob', pos USING ERRCODE = 'AL002';
		END IF;
		INSERT INTO airlock.gate_scopes (position, agent, targets, target_types, max_class, gate_version)
		VALUES (pos, s ->> 'agent',
			CASE WHEN jsonb_typeof(s -> 'targets') = 'array'
			     THEN ARRAY(SELECT jsonb_array_elements_text(s -> 'targets')) END,
			CASE WHEN jsonb_typeof(s -> 'target_types') = 'array'
			     THEN ARRAY(SELECT jsonb_array_elements_text(s -> 'target_types')) END,
			s ->> 'max_class', NEW.version);
	END LOOP;
	RETURN NULL;
EXCEPTION
	WHEN not_null_violation OR check_violation OR invalid_text_representation
	     OR numeric_value_out_of_range THEN
		RAISE EXCEPTION 'gate policy: %', SQLERRM USING ERRCODE = 'AL002';
END
$$;
CREATE TRIGGER gate_policies_door AFTER INSERT ON airlock.gate_policies
	FOR EACH ROW EXECUTE FUNCTION airlock._gate_apply_door();

INSERT INTO airlock.gate_door_limits (hook_match_candidates, hook_match_per_minute, report_bytes,
	hook_events_per_minute, host_checks_per_minute, tool_requests_per_minute, tool_requests_pending,
	guards_per_minute, attribute_updates_per_minute, relationships_per_minute, gate_version)
SELECT (d ->> 'hook_match_candidates')::integer, (d ->> 'hook_match_per_minute')::integer,
	(d ->> 'report_bytes')::integer, (d ->> 'hook_events_per_minute')::integer,
	(d ->> 'host_checks_per_minute')::integer, (d ->> 'tool_requests_per_minute')::integer,
	(d ->> 'tool_requests_pending')::integer, (d ->> 'guards_per_minute')::integer,
	(d ->> 'attribute_updates_per_minute')::integer, (d ->> 'relationships_per_minute')::integer,
	(SELECT max(version) FROM airlock.gate_policies)
FROM airlock._door_defaults() d;

-- The door limits in force (the defaults if the row is missing).
CREATE FUNCTION airlock._door_limits() RETURNS airlock.gate_door_limits
LANGUAGE plpgsql STABLE AS $$
DECLARE
	lim airlock.gate_door_limits;
	d jsonb;
BEGIN
	SELECT l.* INTO lim FROM airlock.gate_door_limits l LIMIT 1;
	IF NOT FOUND THEN
		d := airlock._door_defaults();
		lim := ROW(true, (d ->> 'hook_match_candidates')::integer,
			(d ->> 'hook_match_per_minute')::integer, (d ->> 'report_bytes')::integer,
			(d ->> 'hook_events_per_minute')::integer, (d ->> 'host_checks_per_minute')::integer,
			(d ->> 'tool_requests_per_minute')::integer, (d ->> 'tool_requests_pending')::integer,
			(d ->> 'guards_per_minute')::integer, (d ->> 'attribute_updates_per_minute')::integer,
			(d ->> 'relationships_per_minute')::integer, NULL)::airlock.gate_door_limits;
	END IF;
	RETURN lim;
END
$$;

-- Calls of functions whose writes leave no row to count (hook_match,
-- update_entity_attributes): one row per accepted call, n = what it
-- counts; a login's rows older than two minutes are dropped as it calls.
CREATE TABLE airlock.door_calls (
	login text NOT NULL,
	fn    text NOT NULL,
	at    timestamptz NOT NULL DEFAULT now(),
	n     integer NOT NULL CHECK (n >= 0)
);
CREATE INDEX door_calls_recent ON airlock.door_calls (login, fn, at);

-- Takes n units of fn's per-minute allowance for the session's login, or
-- raises AL010 naming the limit (and writes nothing).  Counted under the
-- login's flood-limit lock, as run() counts, so concurrent sessions of one
-- login cannot slip past it together.
CREATE FUNCTION airlock._door_take(fn text, n integer, per_minute integer, what text, limit_name text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	me text := session_user;
	used bigint;
BEGIN
	PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
	DELETE FROM airlock.door_calls d
	WHERE d.login = me AND d.fn = _door_take.fn AND d.at < now() - interval '2 minutes';
	SELECT coalesce(sum(d.n), 0) INTO used FROM airlock.door_calls d
	WHERE d.login = me AND d.fn = _door_take.fn AND d.at > now() - interval '1 minute';
	IF used + n > per_minute THEN
		RAISE EXCEPTION '%: % already used % of % % allowed per minute (%), and this call needs %. Nothing was written: wait a minute, then ask for less.',
			_door_take.fn, me, used, per_minute, what, limit_name, n USING ERRCODE = 'AL010';
	END IF;
	INSERT INTO airlock.door_calls (login, fn, n) VALUES (me, _door_take.fn, n);
END
$$;

-- ---------------------------------------------------------------- scopes

-- Whether `login` is an agent's login (a member of airlock_agent): scopes
-- bind agents only.  A login that no longer exists is not one.
CREATE FUNCTION airlock._is_agent_login(login text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
		       WHERE r.rolname = login AND pg_catalog.pg_has_role(r.oid, 'airlock_agent', 'MEMBER'))
$$;

-- The scope that binds `login`: the first by position whose agent glob
-- matches it; a row of NULLs (position NULL) when none does or the login
-- is no agent's.
CREATE FUNCTION airlock._scope_of(login text) RETURNS airlock.gate_scopes
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	sc airlock.gate_scopes;
BEGIN
	IF login IS NULL OR NOT EXISTS (SELECT 1 FROM airlock.gate_scopes) OR NOT airlock._is_agent_login(login) THEN
		RETURN sc;
	END IF;
	SELECT s.* INTO sc FROM airlock.gate_scopes s WHERE airlock._glob_match(login, s.agent)
	ORDER BY s.position LIMIT 1;
	RETURN sc;
END
$$;

-- Whether scope sc lets its agent touch the entity slug of type typ.
CREATE FUNCTION airlock._scope_allows(sc airlock.gate_scopes, slug text, typ text) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT sc.position IS NULL
	    OR ((sc.targets IS NULL OR EXISTS (SELECT 1 FROM unnest(sc.targets) g
					       WHERE airlock._glob_match(slug, g)))
		AND (sc.target_types IS NULL OR typ = ANY (sc.target_types)))
$$;

-- Whether the session's login may see the entity slug (of type typ; NULL:
-- looked up).  True for everyone but a scoped agent.
CREATE FUNCTION airlock._sees(slug text, typ text DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	sc airlock.gate_scopes := airlock._scope_of(session_user);
BEGIN
	IF sc.position IS NULL THEN
		RETURN true;
	END IF;
	IF typ IS NULL THEN
		SELECT e.type INTO typ FROM airlock.entities e WHERE e.slug = _sees.slug;
	END IF;
	RETURN airlock._scope_allows(sc, slug, typ);
END
$$;

-- How a scope reads in a message: "targets vm:web*, lxc:*; types vm, lxc;
-- up to config_mutation".
CREATE FUNCTION airlock._scope_text(sc airlock.gate_scopes) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT concat_ws('; ', 'targets ' || coalesce(array_to_string(sc.targets, ', '), 'any'),
		'types ' || coalesce(array_to_string(sc.target_types, ', '), 'any'),
		'up to ' || coalesce(sc.max_class, 'destructive'))
$$;

-- The request's first door: a target outside the requester's scope, a
-- declared risk above its ceiling, or a recovery (always a change) for an
-- agent whose ceiling is below config_mutation is refused before the row
-- is written, whoever inserts it (run, guard, recover; SQL or MCP).
CREATE FUNCTION airlock._scope_door() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	sc airlock.gate_scopes := airlock._scope_of(NEW.requested_by);
BEGIN
	IF sc.position IS NULL THEN
		RETURN NEW;
	END IF;
	IF NOT airlock._scope_allows(sc, NEW.target, NEW.target_type) THEN
		RAISE EXCEPTION '% on % refused: outside the scope of agent % (gate.yaml scope %: %). Nothing was written. Use a target inside your scope, or ask your operator to widen it; do not reach the target another way.',
			NEW.kind, NEW.target, NEW.requested_by, sc.position, airlock._scope_text(sc)
			USING ERRCODE = 'AL020';
	END IF;
	IF airlock._class_rank(NEW.declared_risk) > airlock._class_rank(coalesce(sc.max_class, 'destructive')) THEN
		RAISE EXCEPTION '% on % refused: declared risk % is above the highest class agent % may request (%, gate.yaml scope %). Nothing was written. Ask your operator.',
			NEW.kind, NEW.target, NEW.declared_risk, NEW.requested_by, sc.max_class, sc.position
			USING ERRCODE = 'AL020';
	END IF;
	IF NEW.kind = 'recover' AND airlock._class_rank(coalesce(sc.max_class, 'destructive')) < 2 THEN
		RAISE EXCEPTION 'recover on % refused: restoring files is a change, above the highest class agent % may request (%, gate.yaml scope %). Nothing was written. Ask your operator.',
			NEW.target, NEW.requested_by, sc.max_class, sc.position USING ERRCODE = 'AL020';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER executions_scope_door BEFORE INSERT ON airlock.executions
	FOR EACH ROW EXECUTE FUNCTION airlock._scope_door();

-- The ceiling, once the worker knows the class: a row classified above its
-- requester's highest class cannot be recorded as classified.  The worker
-- then refuses it (nothing ran, the class named in the refusal).
CREATE FUNCTION airlock._scope_ceiling() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	sc airlock.gate_scopes := airlock._scope_of(NEW.requested_by);
BEGIN
	IF sc.position IS NOT NULL AND sc.max_class IS NOT NULL
	   AND airlock._class_rank(NEW.class) > airlock._class_rank(sc.max_class) THEN
		RAISE EXCEPTION 'refused: the command is classified %, above the highest class agent % may request (%, gate.yaml scope %). Nothing ran. Ask your operator to run it, or to widen your scope; do not run it another way.',
			NEW.class, NEW.requested_by, sc.max_class, sc.position USING ERRCODE = 'AL020';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER executions_scope_ceiling BEFORE UPDATE OF class ON airlock.executions
	FOR EACH ROW WHEN (NEW.class IS DISTINCT FROM OLD.class AND NEW.class IS NOT NULL)
	EXECUTE FUNCTION airlock._scope_ceiling();

-- What a scoped agent reads straight from the tables answers only inside
-- its scope too.  Row security binds the roles that read these tables;
-- airlock's own functions run as the tables' owner and see every row.
ALTER TABLE airlock.entities ENABLE ROW LEVEL SECURITY;
ALTER TABLE airlock.relationships ENABLE ROW LEVEL SECURITY;
ALTER TABLE airlock.checks ENABLE ROW LEVEL SECURITY;
CREATE POLICY entities_staff ON airlock.entities FOR SELECT
	TO airlock_operator, airlock_worker, airlock_scheduler USING (true);
CREATE POLICY entities_agents ON airlock.entities FOR SELECT TO airlock_agent
	USING (airlock._sees(slug, type));
CREATE POLICY relationships_staff ON airlock.relationships FOR SELECT
	TO airlock_operator, airlock_worker, airlock_scheduler USING (true);
CREATE POLICY relationships_agents ON airlock.relationships FOR SELECT TO airlock_agent
	USING (airlock._sees(source) AND airlock._sees(target));
CREATE POLICY checks_staff ON airlock.checks FOR SELECT
	TO airlock_operator, airlock_worker, airlock_scheduler USING (true);
CREATE POLICY checks_agents ON airlock.checks FOR SELECT TO airlock_agent
	USING (airlock._sees(entity));

-- An agent reads only its own tool requests (they name what its human said).
ALTER TABLE airlock.tool_requests ENABLE ROW LEVEL SECURITY;
CREATE POLICY tool_requests_staff ON airlock.tool_requests FOR SELECT
	TO airlock_operator, airlock_worker USING (true);
CREATE POLICY tool_requests_own ON airlock.tool_requests FOR SELECT TO airlock_agent
	USING (requested_by = session_user);

-- ---------------------------------------------------------------- reads inside the scope

-- An entity the caller may not see is answered as an unknown one; a scoped
-- agent gets the same words for both, so the answer says nothing about
-- what lies outside its scope.
CREATE FUNCTION airlock._unknown_entity(fn text, slug text) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF (airlock._scope_of(session_user)).position IS NOT NULL THEN
		RAISE EXCEPTION '%: unknown entity "%" (or outside your scope)', fn, slug USING ERRCODE = 'AL001';
	END IF;
	RAISE EXCEPTION '%: unknown entity "%"', fn, slug USING ERRCODE = 'AL001';
END
$$;

CREATE OR REPLACE FUNCTION airlock.get_relations(slug text) RETURNS SETOF jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = get_relations.slug)
	   OR NOT airlock._sees(get_relations.slug) THEN
		PERFORM airlock._unknown_entity('get_relations', get_relations.slug);
	END IF;
	RETURN QUERY
		SELECT jsonb_build_object('source', r.source, 'target', r.target, 'type', r.type,
			'created_by', r.created_by, 'created_at', r.created_at,
			'direction', CASE WHEN r.source = get_relations.slug THEN 'out' ELSE 'in' END)
		FROM airlock.relationships r
		WHERE (r.source = get_relations.slug OR r.target = get_relations.slug)
		  AND airlock._sees(CASE WHEN r.source = get_relations.slug THEN r.target ELSE r.source END)
		ORDER BY r.id;
END
$$;

CREATE OR REPLACE FUNCTION airlock.get_health_summary(slug text DEFAULT NULL) RETURNS SETOF jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF slug IS NOT NULL AND (NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = get_health_summary.slug)
				 OR NOT airlock._sees(get_health_summary.slug)) THEN
		PERFORM airlock._unknown_entity('get_health_summary', get_health_summary.slug);
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
		WHERE (get_health_summary.slug IS NULL OR e.slug = get_health_summary.slug)
		  AND airlock._sees(e.slug, e.type)
		ORDER BY e.slug;
END
$$;

CREATE OR REPLACE FUNCTION airlock.list_checks(slug text DEFAULT NULL) RETURNS SETOF jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF slug IS NOT NULL AND (NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = list_checks.slug)
				 OR NOT airlock._sees(list_checks.slug)) THEN
		PERFORM airlock._unknown_entity('list_checks', list_checks.slug);
	END IF;
	RETURN QUERY
		SELECT jsonb_strip_nulls(jsonb_build_object('slug', c.entity, 'name', c.name, 'status', c.status,
			'detail', c.detail, 'probed_at', c.probed_at))
		FROM airlock.checks c
		WHERE (list_checks.slug IS NULL OR c.entity = list_checks.slug) AND airlock._sees(c.entity)
		ORDER BY c.entity, c.name;
END
$$;

CREATE OR REPLACE FUNCTION airlock.list_executions(state text DEFAULT NULL, target text DEFAULT NULL,
					lim integer DEFAULT 50, before_id bigint DEFAULT NULL)
RETURNS SETOF jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	see_all boolean := airlock._is_operator() OR airlock._is_worker();
	sc airlock.gate_scopes := airlock._scope_of(session_user);
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
		WHERE (see_all OR (e.requested_by = session_user
				   AND (sc.position IS NULL OR airlock._scope_allows(sc, e.target, e.target_type))))
		  AND (list_executions.state IS NULL OR e.state = list_executions.state)
		  AND (list_executions.target IS NULL OR e.target = list_executions.target)
		  AND (before_id IS NULL OR e.id < before_id)
		ORDER BY e.id DESC LIMIT lim;
END
$$;

-- As 0001's get_execution; a scoped agent's own request on a target
-- outside its scope is not found.
CREATE OR REPLACE FUNCTION airlock.get_execution(id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	sc airlock.gate_scopes := airlock._scope_of(session_user);
BEGIN
	SELECT * INTO e FROM airlock.executions x WHERE x.id = get_execution.id;
	IF NOT FOUND OR (e.requested_by <> session_user AND NOT airlock._is_operator()
			 AND NOT airlock._is_worker()) THEN
		RAISE EXCEPTION 'execution % not found (an agent sees only its own requests)', get_execution.id
			USING ERRCODE = 'AL007';
	END IF;
	IF sc.position IS NOT NULL AND e.requested_by = session_user
	   AND NOT airlock._scope_allows(sc, e.target, e.target_type) THEN
		RAISE EXCEPTION 'execution % not found (an agent sees only its own requests, on targets inside its scope)', get_execution.id
			USING ERRCODE = 'AL007';
	END IF;
	RETURN airlock._execution_json(e, true);
END
$$;

-- ---------------------------------------------------------------- writes inside the scope, per minute

-- A write by the session's login on entity slug: outside a scoped agent's
-- target globs it is refused as outside the scope whether or not the
-- entity exists (AL020); an entity that does not exist is unknown (AL001);
-- one of a type the scope does not name is outside it (AL020).
CREATE FUNCTION airlock._scope_write(fn text, slug text) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	sc airlock.gate_scopes := airlock._scope_of(session_user);
	typ text;
BEGIN
	IF sc.position IS NOT NULL AND sc.targets IS NOT NULL
	   AND NOT EXISTS (SELECT 1 FROM unnest(sc.targets) g WHERE airlock._glob_match(slug, g)) THEN
		RAISE EXCEPTION '%: % is outside the scope of agent % (gate.yaml scope %: %). Nothing was written.',
			fn, slug, session_user, sc.position, airlock._scope_text(sc) USING ERRCODE = 'AL020';
	END IF;
	SELECT e.type INTO typ FROM airlock.entities e WHERE e.slug = _scope_write.slug;
	IF NOT FOUND THEN
		RAISE EXCEPTION '%: unknown entity "%"', fn, slug USING ERRCODE = 'AL001';
	END IF;
	IF NOT airlock._scope_allows(sc, slug, typ) THEN
		RAISE EXCEPTION '%: % is outside the scope of agent % (gate.yaml scope %: %). Nothing was written.',
			fn, slug, session_user, sc.position, airlock._scope_text(sc) USING ERRCODE = 'AL020';
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION airlock.update_entity_attributes(slug text, attributes jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	merged text[] := '{}';
	dropped jsonb := '[]';
	keep jsonb := '{}';
	k text;
	nk text;
	skel text;
	v jsonb;
	sk airlock.scheduler_keys;
	lim airlock.gate_limits := airlock._limits();
	limited boolean := airlock._limits_apply();
	size bigint;
	result jsonb;
BEGIN
	IF attributes IS NULL OR jsonb_typeof(attributes) <> 'object' THEN
		RAISE EXCEPTION 'update_entity_attributes: attributes must be a JSON object' USING ERRCODE = 'AL002';
	END IF;
	PERFORM airlock._scope_write('update_entity_attributes', update_entity_attributes.slug);
	IF limited THEN
		size := octet_length(attributes::text);
		IF size > lim.attribute_bytes THEN
			RAISE EXCEPTION 'update_entity_attributes: the attributes document is % bytes; the gate policy allows % (attribute_bytes). Nothing was written.',
				size, lim.attribute_bytes USING ERRCODE = 'AL010';
		END IF;
		PERFORM airlock._door_take('update_entity_attributes', 1,
			(airlock._door_limits()).attribute_updates_per_minute, 'calls',
			'attribute_updates_per_minute');
	END IF;
	FOR k, v IN SELECT * FROM jsonb_each(attributes) ORDER BY 1 LOOP
		nk := airlock._attribute_key(k);
		skel := airlock._key_skeleton(nk);
		SELECT * INTO sk FROM airlock.scheduler_keys s WHERE s.skeleton = skel
		ORDER BY s.key <> lower(nk) LIMIT 1;
		IF FOUND THEN
			dropped := dropped || jsonb_build_array(jsonb_build_object('key', k, 'reason',
				CASE WHEN k = sk.key THEN sk.reason
				     ELSE format('"%s" is the scheduler-owned key "%s" once normalised (NFKC, case, spaces and separators do not make a different key). ', k, sk.key)
					  || sk.reason END));
		ELSIF keep ? nk THEN
			RAISE EXCEPTION 'update_entity_attributes: two keys normalise to "%" (NFKC, trimmed); send it once. Nothing was written.', nk
				USING ERRCODE = 'AL002';
		ELSE
			keep := keep || jsonb_build_object(nk, v);
			merged := merged || nk;
		END IF;
	END LOOP;
	SELECT e.attributes || keep INTO result FROM airlock.entities e
	WHERE e.slug = update_entity_attributes.slug FOR UPDATE;
	IF limited AND keep <> '{}' THEN
		IF (SELECT count(*) FROM jsonb_object_keys(result)) > lim.attribute_keys THEN
			RAISE EXCEPTION 'update_entity_attributes: % would have % attribute keys; the gate policy allows % (attribute_keys). Nothing was written.',
				update_entity_attributes.slug, (SELECT count(*) FROM jsonb_object_keys(result)), lim.attribute_keys
				USING ERRCODE = 'AL010';
		END IF;
		IF octet_length(result::text) > lim.attribute_bytes THEN
			RAISE EXCEPTION 'update_entity_attributes: % would have an attributes document of % bytes; the gate policy allows % (attribute_bytes). Nothing was written.',
				update_entity_attributes.slug, octet_length(result::text), lim.attribute_bytes
				USING ERRCODE = 'AL010';
		END IF;
	END IF;
	UPDATE airlock.entities e SET attributes = e.attributes || keep,
		updated_at = CASE WHEN keep = '{}' THEN e.updated_at ELSE now() END
	WHERE e.slug = update_entity_attributes.slug
	RETURNING e.attributes INTO result;
	RETURN jsonb_build_object('slug', update_entity_attributes.slug, 'merged', to_jsonb(merged),
				  'dropped', dropped, 'attributes', result);
END
$$;

CREATE INDEX relationships_creator ON airlock.relationships (created_by, created_at);

CREATE OR REPLACE FUNCTION airlock.create_relationship(source text, target text, type text) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	created boolean;
	lim airlock.gate_limits := airlock._limits();
	door airlock.gate_door_limits;
	me text := session_user;
	ent text;
	n bigint;
BEGIN
	IF type IS NULL OR type !~ '^[a-z][a-z0-9-]{0,62}$' THEN
		RAISE EXCEPTION 'create_relationship: type "%" must be lowercase words joined by dashes, such as depends-on', type
			USING ERRCODE = 'AL002';
	END IF;
	IF source = target THEN
		RAISE EXCEPTION 'create_relationship: an entity cannot relate to itself (%)', source USING ERRCODE = 'AL002';
	END IF;
	PERFORM airlock._scope_write('create_relationship', source);
	PERFORM airlock._scope_write('create_relationship', target);
	IF airlock._limits_apply() AND NOT EXISTS (SELECT 1 FROM airlock.relationships r
		WHERE r.source = create_relationship.source AND r.target = create_relationship.target
		  AND r.type = create_relationship.type) THEN
		door := airlock._door_limits();
		-- New relationships per minute, counted under the login's lock.
		PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.relationships r
			WHERE r.created_by = me AND r.created_at > now() - interval '1 minute'
			LIMIT door.relationships_per_minute) c;
		IF n >= door.relationships_per_minute THEN
			RAISE EXCEPTION 'create_relationship: % already recorded % relationships in the last minute; the gate policy allows % per minute (relationships_per_minute). Nothing was written: wait, then send fewer.',
				me, n, door.relationships_per_minute USING ERRCODE = 'AL010';
		END IF;
		-- Serialise per pair of ends, in a fixed order, so the count holds.
		PERFORM pg_advisory_xact_lock(74287733, hashtext(least(source, target)));
		PERFORM pg_advisory_xact_lock(74287733, hashtext(greatest(source, target)));
		FOREACH ent IN ARRAY ARRAY[source, target] LOOP
			SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.relationships r
				WHERE r.source = ent OR r.target = ent LIMIT lim.relationships_per_entity) c;
			IF n >= lim.relationships_per_entity THEN
				RAISE EXCEPTION 'create_relationship: % already has % relationships; the gate policy allows % per entity (relationships_per_entity). Nothing was written.',
					ent, n, lim.relationships_per_entity USING ERRCODE = 'AL010';
			END IF;
		END LOOP;
	END IF;
	INSERT INTO airlock.relationships (source, target, type, created_by)
	VALUES (source, target, type, session_user)
	ON CONFLICT DO NOTHING;
	GET DIAGNOSTICS created = ROW_COUNT;
	RETURN jsonb_build_object('source', source, 'target', target, 'type', type, 'created', created);
END
$$;

-- ---------------------------------------------------------------- the hook's oracle, limited

-- As 0007's, with limits: at most hook_match_candidates distinct
-- destinations per call and hook_match_per_minute per login per minute
-- (AL010 over either, and nothing counted).  A scoped agent is told that a
-- managed destination outside its scope is managed, but not which entity.
DROP FUNCTION airlock.hook_match(text[]);
CREATE FUNCTION airlock.hook_match(candidates text[])
RETURNS TABLE (candidate text, kind text, slug text, label text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	door airlock.gate_door_limits := airlock._door_limits();
	sc airlock.gate_scopes := airlock._scope_of(session_user);
	n integer;
BEGIN
	IF candidates IS NULL OR cardinality(candidates) > 256 THEN
		RAISE EXCEPTION 'hook_match: between 0 and 256 candidates, got %', coalesce(cardinality(candidates), 0)
			USING ERRCODE = 'AL002';
	END IF;
	SELECT count(DISTINCT lower(x)) INTO n FROM unnest(candidates) x
	WHERE x IS NOT NULL AND octet_length(x) BETWEEN 1 AND 253;
	IF airlock._limits_apply() THEN
		IF n > door.hook_match_candidates THEN
			RAISE EXCEPTION 'hook_match: % destinations in one call; the gate policy allows % (hook_match_candidates). Nothing was answered: ask about fewer at once.',
				n, door.hook_match_candidates USING ERRCODE = 'AL010';
		END IF;
		PERFORM airlock._door_take('hook_match', n, door.hook_match_per_minute, 'destinations',
			'hook_match_per_minute');
	END IF;
	RETURN QUERY
		WITH c AS (SELECT DISTINCT lower(x) AS v FROM unnest(candidates) x
			   WHERE x IS NOT NULL AND octet_length(x) BETWEEN 1 AND 253),
		m AS (
			SELECT c.v, 'managed'::text AS k, e.slug AS s, NULL::text AS l, e.type AS t
			FROM c JOIN airlock.entities e
			  ON c.v IN (lower(e.slug), lower(split_part(e.slug, ':', 2)), airlock._canon_host(e.address))
			UNION
			SELECT c.v, d.kind, d.slug, d.label, (SELECT e.type FROM airlock.entities e WHERE e.slug = d.slug)
			FROM c JOIN airlock.destinations d
			  ON d.destination = c.v
			  OR (left(d.destination, 2) = '*.' AND length(c.v) > length(d.destination) - 1
			      AND right(c.v, length(d.destination) - 1) = substr(d.destination, 2)))
		SELECT DISTINCT m.v, m.k,
		       CASE WHEN m.s IS NULL OR airlock._scope_allows(sc, m.s, m.t) THEN m.s END,
		       CASE WHEN m.s IS NULL OR airlock._scope_allows(sc, m.s, m.t) THEN m.l
			    ELSE 'a machine airlock manages, outside your scope' END
		FROM m;
END
$$;

-- ---------------------------------------------------------------- what agents' hosts report

-- Where a hook event came from: the client address as the database saw the
-- connection (NULL for a local socket), and the host name the hook reported
-- (the agent's host says so; nothing checks it).
ALTER TABLE airlock.hook_events ADD COLUMN client_addr inet, ADD COLUMN host text;
CREATE INDEX hook_events_agent_at ON airlock.hook_events (agent, at);
CREATE INDEX hook_events_at ON airlock.hook_events (at);
COMMENT ON TABLE airlock.hook_events IS
	'Every deny and ask of `airlock hook` (attempted side doors), append-only, as reported by the agent''s host and not verified: agent is the login, client_addr the connection''s address.';

DROP FUNCTION airlock.hook_event(text, text, text, jsonb);
CREATE FUNCTION airlock.hook_event(tool text, decision text, reason text, detail jsonb DEFAULT '{}')
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	door airlock.gate_door_limits := airlock._door_limits();
	me text := session_user;
	n bigint;
	new_id bigint;
BEGIN
	IF tool IS NULL OR tool = '' OR octet_length(tool) > 200 THEN
		RAISE EXCEPTION 'hook_event: tool is required (at most 200 bytes)' USING ERRCODE = 'AL002';
	END IF;
	IF decision IS NULL OR decision NOT IN ('deny', 'ask', 'allow') THEN
		RAISE EXCEPTION 'hook_event: decision must be deny, ask or allow, not "%"', decision
			USING ERRCODE = 'AL002';
	END IF;
	IF reason IS NULL OR reason = '' THEN
		RAISE EXCEPTION 'hook_event: reason is required' USING ERRCODE = 'AL002';
	END IF;
	IF detail IS NULL OR jsonb_typeof(detail) <> 'object' THEN
		RAISE EXCEPTION 'hook_event: detail must be a JSON object' USING ERRCODE = 'AL002';
	END IF;
	IF airlock._limits_apply() THEN
		IF octet_length(reason) + octet_length(detail::text) > door.report_bytes THEN
			RAISE EXCEPTION 'hook_event: reason and detail are % bytes; the gate policy allows % (report_bytes). Nothing was written.',
				octet_length(reason) + octet_length(detail::text), door.report_bytes USING ERRCODE = 'AL010';
		END IF;
		PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.hook_events h
			WHERE h.agent = me AND h.at > now() - interval '1 minute'
			LIMIT door.hook_events_per_minute) c;
		IF n >= door.hook_events_per_minute THEN
			RAISE EXCEPTION 'hook_event: % already recorded % hook events in the last minute; the gate policy allows % per minute (hook_events_per_minute). Nothing was written.',
				me, n, door.hook_events_per_minute USING ERRCODE = 'AL010';
		END IF;
	ELSIF octet_length(reason) + octet_length(detail::text) > 1048576 THEN
		RAISE EXCEPTION 'hook_event: reason and detail are over 1 MiB' USING ERRCODE = 'AL002';
	END IF;
	INSERT INTO airlock.hook_events (agent, tool, decision, reason, detail, client_addr, host)
	VALUES (session_user, tool, decision, reason, detail, inet_client_addr(),
		left(CASE WHEN jsonb_typeof(detail -> 'host') = 'string' THEN detail ->> 'host' END, 255))
	RETURNING id INTO new_id;
	PERFORM pg_notify('airlock_hook', '');
	RETURN new_id;
END
$$;

-- `airlock hook --check` and `airlock doctor --agent-host` results, as
-- the agent's host reported them: append-only, never verified.
CREATE TABLE airlock.host_checks (
	id          bigserial PRIMARY KEY,
	at          timestamptz NOT NULL DEFAULT clock_timestamp(),
	agent       text NOT NULL,
	client_addr inet,
	host        text NOT NULL CHECK (octet_length(host) BETWEEN 1 AND 255),
	open_doors  integer NOT NULL CHECK (open_doors >= 0),
	findings    jsonb NOT NULL CHECK (jsonb_typeof(findings) = 'array')
);
CREATE INDEX host_checks_agent_at ON airlock.host_checks (agent, at);
COMMENT ON TABLE airlock.host_checks IS
	'Side-door checks of agents'' hosts (airlock hook --check), append-only, as reported and not verified.';
CREATE TRIGGER host_checks_no_update BEFORE UPDATE OR DELETE ON airlock.host_checks
	FOR EACH ROW EXECUTE FUNCTION airlock._append_only();
CREATE TRIGGER host_checks_no_truncate BEFORE TRUNCATE ON airlock.host_checks
	FOR EACH STATEMENT EXECUTE FUNCTION airlock._append_only();

CREATE FUNCTION airlock.report_host_check(host text, open_doors integer, findings jsonb) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	door airlock.gate_door_limits := airlock._door_limits();
	me text := session_user;
	n bigint;
	new_id bigint;
BEGIN
	IF host IS NULL OR octet_length(host) NOT BETWEEN 1 AND 255 THEN
		RAISE EXCEPTION 'report_host_check: host is the reporting host''s name (1 to 255 bytes)' USING ERRCODE = 'AL002';
	END IF;
	IF open_doors IS NULL OR open_doors < 0 THEN
		RAISE EXCEPTION 'report_host_check: open_doors is a count (0 or more)' USING ERRCODE = 'AL002';
	END IF;
	IF findings IS NULL OR jsonb_typeof(findings) <> 'array' THEN
		RAISE EXCEPTION 'report_host_check: findings must be a JSON array' USING ERRCODE = 'AL002';
	END IF;
	IF airlock._limits_apply() THEN
		IF octet_length(findings::text) > door.report_bytes THEN
			RAISE EXCEPTION 'report_host_check: the findings are % bytes; the gate policy allows % (report_bytes). Nothing was written.',
				octet_length(findings::text), door.report_bytes USING ERRCODE = 'AL010';
		END IF;
		PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.host_checks h
			WHERE h.agent = me AND h.at > now() - interval '1 minute'
			LIMIT door.host_checks_per_minute) c;
		IF n >= door.host_checks_per_minute THEN
			RAISE EXCEPTION 'report_host_check: % already reported % host checks in the last minute; the gate policy allows % per minute (host_checks_per_minute). Nothing was written.',
				me, n, door.host_checks_per_minute USING ERRCODE = 'AL010';
		END IF;
	END IF;
	INSERT INTO airlock.host_checks (agent, client_addr, host, open_doors, findings)
	VALUES (me, inet_client_addr(), host, open_doors, findings)
	RETURNING id INTO new_id;
	PERFORM pg_notify('airlock_hook', '');
	RETURN new_id;
END
$$;

-- For a side-door check of an agent's host: how each managed node is
-- reached (SSH and API).  Operators only: agents do not read addresses.
CREATE FUNCTION airlock.side_door_targets()
RETURNS TABLE (slug text, address text, ssh_port integer, ssh_user text, api_port integer,
	       host_key_fingerprint text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT e.slug, e.address, coalesce(e.port, 22), coalesce(e.ssh_user, 'root'),
	       CASE WHEN e.attributes ->> 'api_port' ~ '^[0-9]{1,5}$' THEN (e.attributes ->> 'api_port')::integer
		    ELSE 8006 END,
	       e.host_key_fingerprint
	FROM airlock.entities e
	WHERE e.type = 'proxmox-host' AND e.gone_at IS NULL AND e.address IS NOT NULL
	ORDER BY e.slug
$$;

-- Everything operators should see about the side door, newest first: what
-- agents' hosts report (hook denials and asks, host checks: not verified)
-- and what airlockd's probes observed on the nodes (verified).
CREATE VIEW airlock.side_door AS
	SELECT 'hook'::text AS source, h.id, h.at, h.agent, coalesce(h.host, '') AS host,
	       h.client_addr, h.decision AS finding, h.tool, h.reason AS detail, false AS verified,
	       'reported by the agent''s host, not verified'::text AS provenance
	FROM airlock.hook_events h WHERE h.decision IN ('deny', 'ask')
	UNION ALL
	SELECT 'host_check', c.id, c.at, c.agent, c.host, c.client_addr,
	       CASE WHEN c.open_doors > 0 THEN c.open_doors || ' open door(s)' ELSE 'closed' END,
	       NULL, (SELECT string_agg(f ->> 'detail', '; ') FROM jsonb_array_elements(c.findings) f
		      WHERE f ->> 'status' = 'open'),
	       false, 'reported by the agent''s host, not verified'
	FROM airlock.host_checks c
	UNION ALL
	SELECT 'probe', NULL, k.probed_at, NULL, k.entity, NULL, k.name, NULL, k.detail, true,
	       'observed by airlockd on the node'
	FROM airlock.checks k
	WHERE k.name IN ('access_outside_airlock', 'change_outside_airlock') AND k.status = 'failing';
COMMENT ON VIEW airlock.side_door IS
	'Side-door findings for operators: hook denials and asks and host checks as agents'' hosts reported them (not verified), failing probe checks (observed by airlockd).';

-- The side door in one line (the pending page, `airlock pending`): failing
-- probe findings now, hook denials and asks since `since`, and the agents'
-- hosts whose latest check reported an open door.
CREATE FUNCTION airlock.side_door_summary(since interval DEFAULT interval '24 hours')
RETURNS TABLE (probe_findings integer, denials integer, asks integer, hosts_open integer,
	       open_hosts text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	WITH latest AS (
		SELECT DISTINCT ON (c.agent, c.host) c.agent, c.host, c.open_doors
		FROM airlock.host_checks c
		WHERE c.at > now() - since
		ORDER BY c.agent, c.host, c.id DESC)
	SELECT (SELECT count(*)::integer FROM airlock.checks k
		WHERE k.name IN ('access_outside_airlock', 'change_outside_airlock')
		  AND k.status = 'failing'),
	       (SELECT count(*)::integer FROM airlock.hook_events h
		WHERE h.decision = 'deny' AND h.at > now() - since),
	       (SELECT count(*)::integer FROM airlock.hook_events h
		WHERE h.decision = 'ask' AND h.at > now() - since),
	       (SELECT count(*)::integer FROM latest WHERE open_doors > 0),
	       (SELECT string_agg(DISTINCT host, ', ') FROM latest WHERE open_doors > 0)
$$;

-- Announcing them: what each host (the client address the database saw;
-- "local" for a socket) reported since its last announcement, at most one
-- announcement per host per interval.  A cursor remembers how far the
-- reports have been counted.
CREATE TABLE airlock.side_door_announcements (
	host_key     text PRIMARY KEY,
	hosts        text NOT NULL DEFAULT '',
	agents       text NOT NULL DEFAULT '',
	denials      integer NOT NULL DEFAULT 0,
	asks         integer NOT NULL DEFAULT 0,
	open_reports integer NOT NULL DEFAULT 0,
	last_at      timestamptz,
	last_detail  text,
	announced_at timestamptz
);
CREATE TABLE airlock.side_door_cursor (
	one           boolean PRIMARY KEY DEFAULT true CHECK (one),
	last_hook_id  bigint NOT NULL DEFAULT 0,
	last_check_id bigint NOT NULL DEFAULT 0
);
INSERT INTO airlock.side_door_cursor (last_hook_id, last_check_id)
SELECT coalesce((SELECT max(id) FROM airlock.hook_events), 0), 0;

-- Counts what was reported since the cursor into each host's row, then
-- returns (and clears) the rows of hosts with something new whose last
-- announcement is older than min_interval_s.  One daemon at a time; another
-- that calls meanwhile gets nothing.
CREATE FUNCTION airlock.side_door_due(min_interval_s integer)
RETURNS TABLE (host_key text, hosts text, agents text, denials integer, asks integer,
	       open_reports integer, last_at timestamptz, last_detail text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	cur airlock.side_door_cursor;
	top_hook bigint;
	top_check bigint;
BEGIN
	IF min_interval_s IS NULL OR min_interval_s < 0 THEN
		RAISE EXCEPTION 'side_door_due: min_interval_s is 0 or more seconds' USING ERRCODE = 'AL002';
	END IF;
	IF NOT pg_try_advisory_xact_lock(74287737, 0) THEN
		RETURN;
	END IF;
	SELECT * INTO cur FROM airlock.side_door_cursor;
	SELECT coalesce(max(h.id), cur.last_hook_id) INTO top_hook FROM airlock.hook_events h
	WHERE h.id > cur.last_hook_id;
	SELECT coalesce(max(c.id), cur.last_check_id) INTO top_check FROM airlock.host_checks c
	WHERE c.id > cur.last_check_id;
	INSERT INTO airlock.side_door_announcements AS a (host_key, hosts, agents, denials, asks,
		open_reports, last_at, last_detail)
	SELECT n.k, n.hosts, n.agents, n.denials, n.asks, n.open_reports, n.last_at, n.last_detail
	FROM (
		SELECT i.k, string_agg(DISTINCT i.host, ', ') AS hosts,
		       string_agg(DISTINCT i.agent, ', ') AS agents,
		       count(*) FILTER (WHERE i.what = 'deny')::integer AS denials,
		       count(*) FILTER (WHERE i.what = 'ask')::integer AS asks,
		       count(*) FILTER (WHERE i.what = 'open')::integer AS open_reports,
		       max(i.at) AS last_at,
		       (array_agg(i.detail ORDER BY i.at DESC))[1] AS last_detail
		FROM (
			SELECT coalesce(host(h.client_addr), 'local') AS k, coalesce(h.host, '') AS host,
			       h.agent, h.decision AS what, h.at, h.reason AS detail
			FROM airlock.hook_events h
			WHERE h.id > cur.last_hook_id AND h.id <= top_hook AND h.decision IN ('deny', 'ask')
			UNION ALL
			SELECT coalesce(host(c.client_addr), 'local'), c.host, c.agent, 'open', c.at,
			       (SELECT string_agg(f ->> 'detail', '; ') FROM jsonb_array_elements(c.findings) f
				WHERE f ->> 'status' = 'open')
			FROM airlock.host_checks c
			WHERE c.id > cur.last_check_id AND c.id <= top_check AND c.open_doors > 0
		) i GROUP BY i.k
	) n
	ON CONFLICT ON CONSTRAINT side_door_announcements_pkey DO UPDATE
		SET hosts = left(concat_ws(', ', nullif(a.hosts, ''), nullif(EXCLUDED.hosts, '')), 500),
		    agents = left(concat_ws(', ', nullif(a.agents, ''), nullif(EXCLUDED.agents, '')), 500),
		    denials = a.denials + EXCLUDED.denials, asks = a.asks + EXCLUDED.asks,
		    open_reports = a.open_reports + EXCLUDED.open_reports,
		    last_at = EXCLUDED.last_at, last_detail = EXCLUDED.last_detail;
	UPDATE airlock.side_door_cursor SET last_hook_id = top_hook, last_check_id = top_check;
	RETURN QUERY
		WITH due AS (
			UPDATE airlock.side_door_announcements a
			SET denials = 0, asks = 0, open_reports = 0, hosts = '', agents = '',
			    announced_at = now()
			FROM (SELECT x.* FROM airlock.side_door_announcements x
			      WHERE x.denials + x.asks + x.open_reports > 0
				AND (x.announced_at IS NULL
				     OR x.announced_at <= now() - make_interval(secs => min_interval_s))
			      FOR UPDATE) old
			WHERE a.host_key = old.host_key
			RETURNING old.host_key, old.hosts, old.agents, old.denials, old.asks, old.open_reports,
				  old.last_at, old.last_detail)
		SELECT * FROM due ORDER BY 1;
END
$$;

-- ---------------------------------------------------------------- tool requests, limited

DROP FUNCTION airlock.remember_tool(text, text, text, text, text);
CREATE FUNCTION airlock.remember_tool(server text, tool text, verdict text, vm_arg text DEFAULT NULL,
				      reason text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	door airlock.gate_door_limits := airlock._door_limits();
	me text := session_user;
	n bigint;
	new_id bigint;
BEGIN
	IF server IS NULL OR server !~ '^[A-Za-z0-9_.-]{1,100}$' OR tool IS NULL OR tool !~ '^[A-Za-z0-9_.-]{1,100}$' THEN
		RAISE EXCEPTION 'remember_tool: server and tool are names of letters, digits, _ . - (got "%"/"%")', server, tool
			USING ERRCODE = 'AL002';
	END IF;
	IF verdict IS NULL OR verdict NOT IN ('read_only', 'mutating', 'exec') THEN
		RAISE EXCEPTION 'remember_tool: verdict must be read_only, mutating or exec, not "%"', verdict
			USING ERRCODE = 'AL002';
	END IF;
	IF vm_arg IS NOT NULL AND vm_arg !~ '^[A-Za-z0-9_.-]{1,100}$' THEN
		RAISE EXCEPTION 'remember_tool: vm_arg "%" is not an argument name', vm_arg USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(reason) > 1000 THEN
		RAISE EXCEPTION 'remember_tool: reason is longer than 1000 bytes' USING ERRCODE = 'AL002';
	END IF;
	IF airlock._limits_apply() THEN
		PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.tool_requests r
			WHERE r.requested_by = me AND r.requested_at > now() - interval '1 minute'
			LIMIT door.tool_requests_per_minute) c;
		IF n >= door.tool_requests_per_minute THEN
			RAISE EXCEPTION 'remember_tool: % already asked for % tools in the last minute; the gate policy allows % per minute (tool_requests_per_minute). Nothing was written.',
				me, n, door.tool_requests_per_minute USING ERRCODE = 'AL010';
		END IF;
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.tool_requests r
			WHERE r.requested_by = me AND r.state = 'pending'
			LIMIT door.tool_requests_pending) c;
		IF n >= door.tool_requests_pending THEN
			RAISE EXCEPTION 'remember_tool: % already has % tool requests waiting for an operator; the gate policy allows % (tool_requests_pending). Nothing was written: wait for your operator to decide them.',
				me, n, door.tool_requests_pending USING ERRCODE = 'AL010';
		END IF;
	END IF;
	INSERT INTO airlock.tool_requests (server, tool, verdict, vm_arg, reason, requested_by)
	VALUES (server, tool, verdict, vm_arg, reason, session_user)
	RETURNING id INTO new_id;
	PERFORM pg_notify('airlock_tool_request', '');
	RETURN new_id;
END
$$;
CREATE INDEX tool_requests_requester ON airlock.tool_requests (requested_by, requested_at);

-- ---------------------------------------------------------------- guards, limited and reused

-- As 0007's guard, with its own flood limit (guards_per_minute, and the
-- requester's open requests as run() counts them), and no second insert
-- within one checkpoint cadence: when the VM's latest confirmed rewind
-- points were made less than the shortest cadence of their VPGs ago, the
-- new request is recorded as done at once with those points, naming the
-- request that made them.
DROP FUNCTION airlock.guard(text, text, text, text);
CREATE FUNCTION airlock.guard(vm text, tool text, change_id text DEFAULT NULL, action text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ent airlock.entities;
	prev airlock.executions;
	lim airlock.gate_limits;
	door airlock.gate_door_limits;
	me text := session_user;
	n integer;
	cadence double precision;
	new_id bigint;
	what text;
	why text;
BEGIN
	IF vm IS NULL OR btrim(vm) = '' THEN
		RAISE EXCEPTION 'guard: vm is required (a slug such as vm:web01, a name or a vmid)' USING ERRCODE = 'AL002';
	END IF;
	IF tool IS NULL OR btrim(tool) = '' OR octet_length(tool) > 200 THEN
		RAISE EXCEPTION 'guard: tool is required (at most 200 bytes), e.g. proxmox/stop_vm' USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(change_id) > 200 OR octet_length(action) > 500 THEN
		RAISE EXCEPTION 'guard: change_id is at most 200 bytes, action at most 500' USING ERRCODE = 'AL002';
	END IF;
	SELECT count(*) INTO n FROM airlock.entities e
	WHERE e.type = 'vm' AND (e.slug = guard.vm OR e.slug = 'vm:' || guard.vm
		OR (guard.vm ~ '^[0-9]{3,9}$' AND e.vmid = guard.vm::integer));
	IF n <> 1 THEN
		RAISE EXCEPTION 'guard: % matches % VMs in the inventory; name exactly one (its slug)', vm, n
			USING ERRCODE = 'AL001';
	END IF;
	SELECT * INTO ent FROM airlock.entities e
	WHERE e.type = 'vm' AND (e.slug = guard.vm OR e.slug = 'vm:' || guard.vm
		OR (guard.vm ~ '^[0-9]{3,9}$' AND e.vmid = guard.vm::integer));
	IF airlock._limits_apply() THEN
		lim := airlock._limits();
		door := airlock._door_limits();
		PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.executions x
			WHERE x.requested_by = me AND x.created_at > now() - interval '1 minute' AND x.kind = 'guard'
			LIMIT door.guards_per_minute) c;
		IF n >= door.guards_per_minute THEN
			RAISE EXCEPTION 'guard on %: % already asked for % checkpoints in the last minute; the gate policy allows % per minute (guards_per_minute). Nothing was queued: wait, and do not make the change unguarded.',
				ent.slug, me, n, door.guards_per_minute USING ERRCODE = 'AL010';
		END IF;
		SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.executions x
			WHERE x.requested_by = me
			  AND x.state IN ('received', 'queued', 'pending_approval', 'approved')
			LIMIT lim.pending_per_agent) c;
		IF n >= lim.pending_per_agent THEN
			RAISE EXCEPTION 'guard on %: % already has % requests waiting to run or to be decided; the gate policy allows % (pending_per_agent). Nothing was queued.',
				ent.slug, me, n, lim.pending_per_agent USING ERRCODE = 'AL010';
		END IF;
	END IF;
	what := coalesce(nullif(action, ''), 'before ' || tool);
	-- The VM's latest confirmed rewind points, and whether they are younger
	-- than one cadence of every VPG they were made on.
	SELECT x.* INTO prev FROM airlock.executions x
	WHERE x.target = ent.slug AND x.started_at IS NOT NULL
	  AND jsonb_typeof(x.rewind_points) = 'array' AND jsonb_array_length(x.rewind_points) > 0
	  AND NOT coalesce(x.reasons @> '[{"rule": "guard-reuse"}]', false)
	ORDER BY x.id DESC LIMIT 1;
	IF FOUND AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(prev.rewind_points) p
				 WHERE coalesce(p ->> 'checkpoint_id', '') = ''
				    OR jsonb_typeof(coalesce(p -> 'cadence_real_s', p -> 'cadence_s')) IS DISTINCT FROM 'number'
				    OR coalesce(p ->> 'cadence_real_s', p ->> 'cadence_s')::double precision <= 0) THEN
		SELECT min(coalesce(p ->> 'cadence_real_s', p ->> 'cadence_s')::double precision) INTO cadence
		FROM jsonb_array_elements(prev.rewind_points) p;
		IF now() - prev.started_at < make_interval(secs => cadence) THEN
			why := format('the checkpoint airlock request %s inserted %s s ago is within one checkpoint cadence (%s s) of now: reused, no new checkpoint inserted',
				prev.id, round(extract(epoch FROM now() - prev.started_at)::numeric, 1),
				round(cadence::numeric, 1));
			INSERT INTO airlock.executions (target, target_type, command, change_id, action, requested_by, kind)
			VALUES (ent.slug, ent.type, 'checkpoint before ' || tool, nullif(change_id, ''), what, session_user, 'guard')
			RETURNING id INTO new_id;
			PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
				'kind', 'guard', 'tool', tool, 'change_id', change_id, 'action', what));
			UPDATE airlock.executions SET state = 'queued', classified_at = now(),
				reasons = jsonb_build_array(jsonb_build_object('rule', 'guard-reuse', 'words', why))
			WHERE id = new_id;
			PERFORM airlock._event(new_id, 'received', 'queued', jsonb_build_object('kind', 'guard',
				'reused_from', prev.id));
			UPDATE airlock.executions SET state = 'running', started_at = now(),
				rewind_points = prev.rewind_points
			WHERE id = new_id;
			PERFORM airlock._event(new_id, 'queued', 'running', jsonb_build_object(
				'rewind_points', prev.rewind_points, 'reused_from', prev.id, 'note', why));
			UPDATE airlock.executions SET state = 'succeeded', finished_at = now(), duration_ms = 0
			WHERE id = new_id;
			PERFORM airlock._event(new_id, 'running', 'succeeded', jsonb_build_object('kind', 'guard',
				'reused_from', prev.id, 'note', 'checkpoint reused; no command was run'));
			RETURN new_id;
		END IF;
	END IF;
	INSERT INTO airlock.executions (target, target_type, command, change_id, action, requested_by, kind)
	VALUES (ent.slug, ent.type, 'checkpoint before ' || tool, nullif(change_id, ''), what, session_user, 'guard')
	RETURNING id INTO new_id;
	PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
		'kind', 'guard', 'tool', tool, 'change_id', change_id, 'action', what));
	PERFORM pg_notify('airlock_work', '');
	RETURN new_id;
END
$$;

-- ---------------------------------------------------------------- ownership and grants

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION
	airlock.hook_match(text[]),
	airlock.hook_event(text, text, text, jsonb),
	airlock.remember_tool(text, text, text, text, text),
	airlock.guard(text, text, text, text),
	airlock.report_host_check(text, integer, jsonb)
TO airlock_agent, airlock_operator;
GRANT EXECUTE ON FUNCTION airlock.side_door_targets(), airlock.side_door_summary(interval)
TO airlock_operator;
GRANT EXECUTE ON FUNCTION airlock.side_door_due(integer) TO airlock_scheduler, airlock_worker;
-- Row security evaluates its expression as the reading role.
GRANT EXECUTE ON FUNCTION airlock._sees(text, text) TO airlock_agent;

GRANT SELECT ON airlock.gate_door_limits TO airlock_agent, airlock_operator, airlock_worker;
GRANT SELECT ON airlock.gate_scopes, airlock.door_calls, airlock.host_checks, airlock.side_door,
	airlock.side_door_announcements, airlock.side_door_cursor
TO airlock_operator, airlock_worker;
