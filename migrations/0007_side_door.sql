-- 0007_side_door.sql -- closing the side door: what the agent-side hook asks
-- the database, what agents may no longer read, and tools a human remembers.
--
-- * airlock.destinations: names and addresses that reach a managed machine
--   but are not spelled in airlock.entities (aliases, a second address, the
--   ZVM), and the operator's allowlist (a git host).  Operators keep it.
-- * airlock.hook_match(): "is this destination managed, and which slug?" for
--   the hook, answered per candidate without listing any address.
-- * Agents lose SELECT on the columns that say how to reach a machine
--   (address, port, ssh_user, host_key_fingerprint, zerto_vm_identifier).
-- * airlock.hook_events: every deny and ask the hook gives, append-only.
-- * Tool catalog: verdict "exec" (runs commands on a machine: route it through
--   airlock.run), and tools remembered only through an operator's approval.

-- ---------------------------------------------------------------- destinations

CREATE TABLE airlock.destinations (
	destination text PRIMARY KEY
		CHECK (destination = lower(destination) AND destination ~ '^[^[:space:]/@]{1,253}$'),
	kind        text NOT NULL CHECK (kind IN ('managed', 'allowed')),
	slug        text REFERENCES airlock.entities (slug),
	label       text CHECK (octet_length(label) <= 200),
	added_by    text NOT NULL DEFAULT session_user,
	added_at    timestamptz NOT NULL DEFAULT now(),
	CHECK (kind = 'managed' OR slug IS NULL)
);
COMMENT ON TABLE airlock.destinations IS
	'Destinations the hook treats as managed (aliases, extra addresses, the ZVM) or allowed '
	'(no decision); "*.example.org" matches every name below example.org.';

-- A host spelling as the hook normalises it: lower case, no trailing dot;
-- an IP address in canonical form (IPv6 compressed, IPv4-mapped as IPv4).
CREATE FUNCTION airlock._canon_host(h text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = airlock, pg_temp AS $$
DECLARE
	a text;
BEGIN
	IF h IS NULL THEN
		RETURN NULL;
	END IF;
	h := lower(rtrim(btrim(h), '.'));
	IF h ~ '^\[?[0-9a-f:.]+\]?$' AND h ~ ':' THEN
		BEGIN
			a := host(btrim(h, '[]')::inet);
			IF a ~ '^::ffff:[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' THEN
				a := substr(a, 8);
			END IF;
			RETURN a;
		EXCEPTION WHEN invalid_text_representation THEN
			RETURN h;
		END;
	END IF;
	RETURN h;
END
$$;

-- Adds or replaces one destination (operators).  kind: managed | allowed.
CREATE FUNCTION airlock.set_destination(destination text, kind text, slug text DEFAULT NULL,
					label text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	d text := airlock._canon_host(destination);
BEGIN
	IF d IS NULL OR d = '' OR d !~ '^[^[:space:]/@]{1,253}$' THEN
		RAISE EXCEPTION 'set_destination: "%" is not a host name, address or *.domain pattern', destination
			USING ERRCODE = 'AL002';
	END IF;
	IF kind IS NULL OR kind NOT IN ('managed', 'allowed') THEN
		RAISE EXCEPTION 'set_destination: kind must be managed or allowed, not "%"', kind
			USING ERRCODE = 'AL002';
	END IF;
	IF kind = 'allowed' AND slug IS NOT NULL THEN
		RAISE EXCEPTION 'set_destination: an allowed destination names no entity (slug given: %)', slug
			USING ERRCODE = 'AL002';
	END IF;
	IF slug IS NOT NULL AND NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = set_destination.slug) THEN
		RAISE EXCEPTION 'set_destination: unknown entity "%"', slug USING ERRCODE = 'AL001';
	END IF;
	INSERT INTO airlock.destinations AS x (destination, kind, slug, label)
	VALUES (d, kind, slug, nullif(label, ''))
	ON CONFLICT ON CONSTRAINT destinations_pkey DO UPDATE
		SET kind = EXCLUDED.kind, slug = EXCLUDED.slug, label = EXCLUDED.label,
		    added_by = session_user, added_at = now();
	RETURN jsonb_strip_nulls(jsonb_build_object('destination', d, 'kind', kind, 'slug', slug,
		'label', nullif(label, '')));
END
$$;

-- Removes one destination (operators).  false when it was not listed.
CREATE FUNCTION airlock.remove_destination(destination text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	DELETE FROM airlock.destinations x WHERE x.destination = airlock._canon_host(remove_destination.destination);
	RETURN FOUND;
END
$$;

-- The hook's question: which of these candidate destinations (host names
-- and addresses, already normalised by the hook: lower case, canonical IP
-- text) reach a managed machine, and which are allowed?  Only candidates
-- that match come back, with the slug they reach; nothing else is listed.
-- A candidate matches an entity by slug, by name (the slug after "type:"),
-- by address, or through airlock.destinations.
CREATE FUNCTION airlock.hook_match(candidates text[])
RETURNS TABLE (candidate text, kind text, slug text, label text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF candidates IS NULL OR cardinality(candidates) > 256 THEN
		RAISE EXCEPTION 'hook_match: between 0 and 256 candidates, got %', coalesce(cardinality(candidates), 0)
			USING ERRCODE = 'AL002';
	END IF;
	RETURN QUERY
		WITH c AS (SELECT DISTINCT lower(x) AS v FROM unnest(candidates) x
			   WHERE x IS NOT NULL AND octet_length(x) BETWEEN 1 AND 253)
		SELECT c.v, 'managed'::text, e.slug, NULL::text
		FROM c JOIN airlock.entities e
		  ON c.v IN (lower(e.slug), lower(split_part(e.slug, ':', 2)), airlock._canon_host(e.address))
		UNION
		SELECT c.v, d.kind, d.slug, d.label
		FROM c JOIN airlock.destinations d
		  ON d.destination = c.v
		  OR (left(d.destination, 2) = '*.' AND length(c.v) > length(d.destination) - 1
		      AND right(c.v, length(d.destination) - 1) = substr(d.destination, 2));
END
$$;

-- ---------------------------------------------------------------- least knowledge

-- Agents see what a machine is (slug, type, node, vmid, attributes), not how
-- to reach it.  Column privileges: SELECT * as an agent is refused.
REVOKE SELECT ON airlock.entities FROM airlock_agent;
GRANT SELECT (id, slug, type, node, vmid, attributes, created_at, updated_at)
	ON airlock.entities TO airlock_agent;

-- ---------------------------------------------------------------- hook events

CREATE TABLE airlock.hook_events (
	id       bigserial PRIMARY KEY,
	at       timestamptz NOT NULL DEFAULT clock_timestamp(),
	agent    text NOT NULL,
	tool     text NOT NULL,
	decision text NOT NULL CHECK (decision IN ('deny', 'ask', 'allow')),
	reason   text NOT NULL,
	detail   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(detail) = 'object')
);
CREATE INDEX hook_events_agent ON airlock.hook_events (agent, id);
COMMENT ON TABLE airlock.hook_events IS
	'Every deny and ask of `airlock hook` (attempted side doors), append-only; agent is the login.';
CREATE TRIGGER hook_events_no_update BEFORE UPDATE OR DELETE ON airlock.hook_events
	FOR EACH ROW EXECUTE FUNCTION airlock._append_only();
CREATE TRIGGER hook_events_no_truncate BEFORE TRUNCATE ON airlock.hook_events
	FOR EACH STATEMENT EXECUTE FUNCTION airlock._append_only();

-- Records one decision of the hook; the agent is the session's login.
CREATE FUNCTION airlock.hook_event(tool text, decision text, reason text, detail jsonb DEFAULT '{}')
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	new_id bigint;
BEGIN
	IF tool IS NULL OR tool = '' OR octet_length(tool) > 200 THEN
		RAISE EXCEPTION 'hook_event: tool is required (at most 200 bytes)' USING ERRCODE = 'AL002';
	END IF;
	IF decision IS NULL OR decision NOT IN ('deny', 'ask', 'allow') THEN
		RAISE EXCEPTION 'hook_event: decision must be deny, ask or allow, not "%"', decision
			USING ERRCODE = 'AL002';
	END IF;
	IF reason IS NULL OR reason = '' OR octet_length(reason) > 10000 THEN
		RAISE EXCEPTION 'hook_event: reason is required (at most 10000 bytes)' USING ERRCODE = 'AL002';
	END IF;
	IF detail IS NULL OR jsonb_typeof(detail) <> 'object' OR octet_length(detail::text) > 65536 THEN
		RAISE EXCEPTION 'hook_event: detail must be a JSON object of at most 64 KiB' USING ERRCODE = 'AL002';
	END IF;
	INSERT INTO airlock.hook_events (agent, tool, decision, reason, detail)
	VALUES (session_user, tool, decision, reason, detail)
	RETURNING id INTO new_id;
	PERFORM pg_notify('airlock_hook', '');
	RETURN new_id;
END
$$;

-- ---------------------------------------------------------------- tool catalog

-- "exec": the tool runs commands on a machine (ssh/exec, execute_vm_command).
-- A checkpoint does not make that safe; the command belongs in airlock.run.
ALTER TABLE airlock.tools DROP CONSTRAINT tools_verdict_check;
ALTER TABLE airlock.tools ADD CONSTRAINT tools_verdict_check
	CHECK (verdict IN ('read_only', 'mutating', 'exec'));

CREATE OR REPLACE FUNCTION airlock.check_tool(server text, tool text, vm text DEFAULT NULL) RETURNS jsonb
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
			'question', server || '/' || tool || ' is not a known read-only command. It may change '
			|| subject || '. Insert a Zerto tagged checkpoint first so this is reversible?',
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
	IF t.verdict = 'exec' THEN
		RETURN jsonb_build_object('server', server, 'tool', tool, 'verdict', 'exec', 'vm_arg', t.vm_arg,
			'advice', 'Do not call ' || server || '/' || tool || ': it runs commands on ' || subject
			|| ' outside airlock. Route the command through airlock run (the run tool, or airlock.run) '
			|| 'with the target''s slug, so it is classified, gated and recorded.');
	END IF;
	RETURN jsonb_build_object('server', server, 'tool', tool, 'verdict', 'mutating', 'vm_arg', t.vm_arg,
		'advice', 'Guard first. ' || server || '/' || tool || ' is known to change ' || subject
		|| ': insert a tagged checkpoint before calling it, and stop if the checkpoint fails. Do not ask; do not skip the guard.');
END
$$;

CREATE OR REPLACE FUNCTION airlock.seed_tools(tools jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	n integer := 0;
	m integer;
BEGIN
	CREATE TEMP TABLE incoming ON COMMIT DROP AS
		SELECT t ->> 'server' AS server, t ->> 'tool' AS tool, t ->> 'verdict' AS verdict,
		       t ->> 'vm_arg' AS vm_arg
		FROM jsonb_array_elements(tools) t;
	-- Tools an operator approved (remember_tool) stay until a seed names them.
	DELETE FROM airlock.tools x WHERE NOT EXISTS (
		SELECT 1 FROM incoming i WHERE i.server = x.server AND i.tool = x.tool)
	  AND NOT EXISTS (SELECT 1 FROM airlock.tool_requests r WHERE r.state = 'approved'
			  AND r.server = x.server AND r.tool = x.tool);
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

-- Remembering a tool: an agent asks (after its human confirmed the tool
-- changes guests), an operator other than the requester approves, and only
-- then does the catalog change.
CREATE TABLE airlock.tool_requests (
	id           bigserial PRIMARY KEY,
	server       text NOT NULL CHECK (server ~ '^[A-Za-z0-9_.-]{1,100}$'),
	tool         text NOT NULL CHECK (tool ~ '^[A-Za-z0-9_.-]{1,100}$'),
	verdict      text NOT NULL CHECK (verdict IN ('read_only', 'mutating', 'exec')),
	vm_arg       text CHECK (vm_arg ~ '^[A-Za-z0-9_.-]{1,100}$'),
	reason       text CHECK (octet_length(reason) <= 1000),
	requested_by text NOT NULL,
	requested_at timestamptz NOT NULL DEFAULT now(),
	state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'rejected')),
	decided_by   text,
	decided_at   timestamptz,
	CHECK (decided_by IS DISTINCT FROM requested_by)
);

CREATE FUNCTION airlock.remember_tool(server text, tool text, verdict text, vm_arg text DEFAULT NULL,
				      reason text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
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
	INSERT INTO airlock.tool_requests (server, tool, verdict, vm_arg, reason, requested_by)
	VALUES (server, tool, verdict, vm_arg, reason, session_user)
	RETURNING id INTO new_id;
	PERFORM pg_notify('airlock_tool_request', '');
	RETURN new_id;
END
$$;

-- An operator's decision on a tool request; approve writes the catalog.
CREATE FUNCTION airlock.decide_tool(id bigint, approve boolean) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	r airlock.tool_requests;
BEGIN
	SELECT * INTO r FROM airlock.tool_requests x WHERE x.id = decide_tool.id FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'tool request % not found', decide_tool.id USING ERRCODE = 'AL007';
	END IF;
	IF r.state <> 'pending' THEN
		RAISE EXCEPTION 'tool request % is %, not pending', r.id, r.state USING ERRCODE = 'AL005';
	END IF;
	IF r.requested_by = session_user THEN
		RAISE EXCEPTION 'tool request % was made by you (%): nobody may approve their own request', r.id, session_user
			USING ERRCODE = 'AL006';
	END IF;
	UPDATE airlock.tool_requests x SET state = CASE WHEN approve THEN 'approved' ELSE 'rejected' END,
		decided_by = session_user, decided_at = now()
	WHERE x.id = r.id;
	IF approve THEN
		INSERT INTO airlock.tools (server, tool, verdict, vm_arg)
		VALUES (r.server, r.tool, r.verdict, r.vm_arg)
		ON CONFLICT (server, tool) DO UPDATE SET verdict = EXCLUDED.verdict, vm_arg = EXCLUDED.vm_arg;
		RETURN 'approved';
	END IF;
	RETURN 'rejected';
END
$$;

-- ---------------------------------------------------------------- ownership and grants

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION
	airlock.hook_match(text[]),
	airlock.hook_event(text, text, text, jsonb),
	airlock.remember_tool(text, text, text, text, text)
TO airlock_agent, airlock_operator;

GRANT EXECUTE ON FUNCTION
	airlock.set_destination(text, text, text, text),
	airlock.remove_destination(text),
	airlock.decide_tool(bigint, boolean)
TO airlock_operator;

GRANT SELECT ON airlock.destinations, airlock.hook_events, airlock.tool_requests
TO airlock_operator, airlock_worker;
GRANT SELECT ON airlock.tool_requests TO airlock_agent;

-- ---------------------------------------------------------------- guard-only requests

-- Request kinds: run (a command), guard (a tagged Zerto checkpoint before a
-- change another tool will make; no command runs), recover.  A kind column
-- another migration added first is kept; its check is widened to all three.
ALTER TABLE airlock.executions ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'run';
DO $$
DECLARE
	c record;
BEGIN
	FOR c IN SELECT conname FROM pg_constraint
		 WHERE conrelid = 'airlock.executions'::regclass AND contype = 'c'
		   AND pg_get_constraintdef(oid) ~ '\mkind\M' LOOP
		EXECUTE format('ALTER TABLE airlock.executions DROP CONSTRAINT %I', c.conname);
	END LOOP;
END
$$;
ALTER TABLE airlock.executions ADD CONSTRAINT executions_kind_check
	CHECK (kind IN ('run', 'guard', 'recover'));

-- Asks airlockd for a tagged checkpoint of a VM before another tool changes
-- it (the hook calls this for a catalog "mutating" tool).  vm: a slug
-- (vm:web01), a name (web01) or a vmid (101).  tool names the change in the
-- tag.  Returns the execution id; the row goes received -> queued -> running
-- -> succeeded with its rewind points, or refused with the guard's words.
CREATE FUNCTION airlock.guard(vm text, tool text, change_id text DEFAULT NULL, action text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ent airlock.entities;
	n integer;
	new_id bigint;
	what text;
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
	what := coalesce(nullif(action, ''), 'before ' || tool);
	INSERT INTO airlock.executions (target, target_type, command, change_id, action, requested_by, kind)
	VALUES (ent.slug, ent.type, 'checkpoint before ' || tool, nullif(change_id, ''), what, session_user, 'guard')
	RETURNING id INTO new_id;
	PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
		'kind', 'guard', 'tool', tool, 'change_id', change_id, 'action', what));
	PERFORM pg_notify('airlock_work', '');
	RETURN new_id;
END
$$;

-- The worker takes a claimed guard row out of received (nothing to
-- classify: no command runs) so its guard steps can be recorded.
CREATE FUNCTION airlock.worker_guard_begin(exec_id bigint, worker text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received']);
	IF e.kind <> 'guard' THEN
		RAISE EXCEPTION 'execution % is a % request, not a guard', exec_id, e.kind USING ERRCODE = 'AL005';
	END IF;
	UPDATE airlock.executions SET state = 'queued', classified_at = now(),
		reasons = '[{"rule": "guard-only", "words": "a checkpoint only; no command runs"}]'
	WHERE id = exec_id;
	PERFORM airlock._event(exec_id, 'received', 'queued', jsonb_build_object('kind', 'guard',
		'worker', worker));
END
$$;

-- The guard confirmed its checkpoints: running (with the rewind points)
-- and succeeded, in one transaction; nothing was sent to any machine.
CREATE FUNCTION airlock.worker_guard_done(exec_id bigint, worker text, rewind_points jsonb, guard jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued']);
	IF e.kind <> 'guard' THEN
		RAISE EXCEPTION 'execution % is a % request, not a guard', exec_id, e.kind USING ERRCODE = 'AL005';
	END IF;
	IF rewind_points IS NULL OR jsonb_typeof(rewind_points) <> 'array' OR jsonb_array_length(rewind_points) = 0 THEN
		RAISE EXCEPTION 'execution %: a guard succeeds only with rewind points', exec_id USING ERRCODE = 'AL002';
	END IF;
	UPDATE airlock.executions SET state = 'running', started_at = now(),
		rewind_points = worker_guard_done.rewind_points
	WHERE id = exec_id;
	PERFORM airlock._event(exec_id, 'queued', 'running', jsonb_build_object('worker', worker,
		'rewind_points', rewind_points, 'guard', guard));
	UPDATE airlock.executions SET state = 'succeeded', finished_at = now(), claimed_by = NULL,
		duration_ms = (extract(epoch FROM now() - created_at) * 1000)::bigint
	WHERE id = exec_id;
	PERFORM airlock._event(exec_id, 'running', 'succeeded', jsonb_build_object('worker', worker,
		'kind', 'guard', 'note', 'checkpoint confirmed; no command was run'));
	PERFORM pg_advisory_unlock(exec_id);
END
$$;

SELECT airlock._secure_new_objects();
GRANT EXECUTE ON FUNCTION airlock.guard(text, text, text, text) TO airlock_agent, airlock_operator;
GRANT EXECUTE ON FUNCTION
	airlock.worker_guard_begin(bigint, text),
	airlock.worker_guard_done(bigint, text, jsonb, jsonb)
TO airlock_worker;

-- ---------------------------------------------------------------- detection

-- For the scheduler's side-door check: when airlock ran which commands on a
-- host (epoch seconds), so a package or unit change no such command could
-- have made is one nobody went through airlock for.  Guard requests run no
-- command.
CREATE FUNCTION airlock.host_execution_windows(slug text, since bigint)
RETURNS TABLE (started bigint, finished bigint, command text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT extract(epoch FROM e.started_at)::bigint,
	       ceil(extract(epoch FROM coalesce(e.finished_at, now())))::bigint, e.command
	FROM airlock.executions e
	WHERE e.target = host_execution_windows.slug AND e.kind <> 'guard'
	  AND e.started_at IS NOT NULL
	  AND coalesce(e.finished_at, now()) >= to_timestamp(host_execution_windows.since)
	ORDER BY e.started_at
$$;

SELECT airlock._secure_new_objects();
GRANT EXECUTE ON FUNCTION airlock.host_execution_windows(text, bigint) TO airlock_scheduler, airlock_operator;
