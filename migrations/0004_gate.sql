-- 0004_gate.sql -- the gate, hardened: who counts as an approver, how long an
-- approval stays good, gate policy as a versioned seed, flood limits,
-- look-alike attribute keys, quiet notifications, commands too long to carry.
--
-- New SQLSTATEs:
--   AL009  the caller may not decide approvals (a superuser, or a member of
--          airlock_agent, or not an operator)
--   AL010  over a flood limit of the gate policy; nothing was written

-- ---------------------------------------------------------------- gate policy, versioned

-- Every gate policy ever ingested; the highest version is in force.  Version
-- 1 is what this migration found in airlock.gate_policy (the defaults unless
-- an administrator changed them by hand).
CREATE TABLE airlock.gate_policies (
	version   bigserial PRIMARY KEY,
	sha256    text NOT NULL,
	source    text NOT NULL,
	origin    text NOT NULL,
	document  jsonb NOT NULL,
	loaded_at timestamptz NOT NULL DEFAULT now(),
	loaded_by text NOT NULL DEFAULT session_user
);
COMMENT ON TABLE airlock.gate_policies IS
	'Every gate policy ever ingested (seeds/gate.yaml); the highest version is in force.';

ALTER TABLE airlock.gate_policy
	ADD COLUMN approval_valid_for interval NOT NULL DEFAULT interval '15 minutes'
		CHECK (approval_valid_for > interval '0'),
	ADD COLUMN gate_version bigint REFERENCES airlock.gate_policies (version);

-- Per-target and per-agent rules of the version in force.  A rule applies to
-- a request when its globs match (absent glob: any) and its class matches
-- (absent: both gated classes).  Rules only make the gate stricter: the
-- highest quorum and the shortest times of the class and every matching
-- rule apply.
CREATE TABLE airlock.gate_rules (
	position           integer PRIMARY KEY,
	target             text,
	agent              text,
	class              text CHECK (class IN ('config_mutation', 'destructive')),
	approvals_required integer CHECK (approvals_required BETWEEN 1 AND 5),
	ttl                interval CHECK (ttl > interval '0'),
	approval_valid_for interval CHECK (approval_valid_for > interval '0'),
	gate_version       bigint NOT NULL REFERENCES airlock.gate_policies (version),
	CHECK (target IS NOT NULL OR agent IS NOT NULL),
	CHECK (approvals_required IS NOT NULL OR ttl IS NOT NULL OR approval_valid_for IS NOT NULL)
);

-- The flood limits of the version in force (one row).
CREATE TABLE airlock.gate_limits (
	one                      boolean PRIMARY KEY DEFAULT true CHECK (one),
	requests_per_minute      integer NOT NULL CHECK (requests_per_minute BETWEEN 1 AND 100000),
	pending_per_agent        integer NOT NULL CHECK (pending_per_agent BETWEEN 1 AND 100000),
	attribute_bytes          integer NOT NULL CHECK (attribute_bytes BETWEEN 256 AND 16777216),
	attribute_keys           integer NOT NULL CHECK (attribute_keys BETWEEN 1 AND 10000),
	relationships_per_entity integer NOT NULL CHECK (relationships_per_entity BETWEEN 1 AND 100000),
	gate_version             bigint NOT NULL REFERENCES airlock.gate_policies (version)
);

ALTER TABLE airlock.executions
	ADD COLUMN gate_version bigint REFERENCES airlock.gate_policies (version),
	ADD COLUMN approval_valid_until timestamptz,
	ADD COLUMN approved_probe jsonb;
ALTER TABLE airlock.approvals
	ADD COLUMN gate_version bigint REFERENCES airlock.gate_policies (version);

-- An approved row that was not started in time becomes expired.
INSERT INTO airlock.transitions VALUES ('approved', 'expired') ON CONFLICT DO NOTHING;

-- The flood limits count an agent's recent and open requests.
CREATE INDEX executions_requester_created ON airlock.executions (requested_by, created_at);
CREATE INDEX executions_requester_open ON airlock.executions (requested_by)
	WHERE state IN ('received', 'queued', 'pending_approval', 'approved');

-- Makes `doc` (the normalised document `airlock seed` sends) the gate policy
-- in force as version `v`.  Raises AL002 on a document that breaks a rule.
CREATE FUNCTION airlock._gate_apply(v bigint, doc jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	c text;
	r jsonb;
	l jsonb := doc -> 'limits';
	pos integer := 0;
BEGIN
	IF jsonb_typeof(doc -> 'classes') IS DISTINCT FROM 'object' OR jsonb_typeof(l) IS DISTINCT FROM 'object'
	   OR jsonb_typeof(coalesce(doc -> 'rules', '[]')) <> 'array' THEN
		RAISE EXCEPTION 'gate policy: the document needs "classes" and "limits" objects and a "rules" list'
			USING ERRCODE = 'AL002';
	END IF;
	DELETE FROM airlock.gate_rules;
	DELETE FROM airlock.gate_limits;
	FOREACH c IN ARRAY ARRAY['config_mutation', 'destructive'] LOOP
		IF jsonb_typeof(doc -> 'classes' -> c) IS DISTINCT FROM 'object' THEN
			RAISE EXCEPTION 'gate policy: class % is missing', c USING ERRCODE = 'AL002';
		END IF;
		INSERT INTO airlock.gate_policy AS g (class, approvals_required, ttl, approval_valid_for, gate_version)
		VALUES (c, (doc -> 'classes' -> c ->> 'quorum')::integer,
			make_interval(secs => (doc -> 'classes' -> c ->> 'ttl_s')::bigint),
			make_interval(secs => (doc -> 'classes' -> c ->> 'approval_valid_for_s')::bigint), v)
		ON CONFLICT (class) DO UPDATE SET approvals_required = EXCLUDED.approvals_required,
			ttl = EXCLUDED.ttl, approval_valid_for = EXCLUDED.approval_valid_for,
			gate_version = EXCLUDED.gate_version;
	END LOOP;
	FOR r IN SELECT x FROM jsonb_array_elements(coalesce(doc -> 'rules', '[]')) x LOOP
		pos := pos + 1;
		INSERT INTO airlock.gate_rules (position, target, agent, class, approvals_required, ttl,
			approval_valid_for, gate_version)
		VALUES (pos, r ->> 'target', r ->> 'agent', r ->> 'class', (r ->> 'quorum')::integer,
			make_interval(secs => (r ->> 'ttl_s')::bigint),
			make_interval(secs => (r ->> 'approval_valid_for_s')::bigint), v);
	END LOOP;
	INSERT INTO airlock.gate_limits (requests_per_minute, pending_per_agent, attribute_bytes,
		attribute_keys, relationships_per_entity, gate_version)
	VALUES ((l ->> 'requests_per_minute')::integer, (l ->> 'pending_per_agent')::integer,
		(l ->> 'attribute_bytes')::integer, (l ->> 'attribute_keys')::integer,
		(l ->> 'relationships_per_entity')::integer, v);
EXCEPTION
	WHEN not_null_violation OR check_violation OR invalid_text_representation
	     OR numeric_value_out_of_range OR datetime_field_overflow THEN
		RAISE EXCEPTION 'gate policy: %', SQLERRM USING ERRCODE = 'AL002';
END
$$;

-- Version 1: the gate as this migration found it, with the default limits.
DO $$
DECLARE
	doc jsonb;
	src text;
	v bigint;
BEGIN
	SELECT jsonb_build_object('classes', jsonb_object_agg(g.class, jsonb_build_object(
			'quorum', g.approvals_required,
			'ttl_s', extract(epoch FROM g.ttl)::bigint,
			'approval_valid_for_s', extract(epoch FROM g.approval_valid_for)::bigint)),
		'rules', '[]'::jsonb,
		'limits', jsonb_build_object('requests_per_minute', 60, 'pending_per_agent', 100,
			'attribute_bytes', 65536, 'attribute_keys', 256, 'relationships_per_entity', 256))
	INTO doc FROM airlock.gate_policy g;
	src := '# the gate policy in force when migration 0004 ran' || E'\n' || jsonb_pretty(doc) || E'\n';
	INSERT INTO airlock.gate_policies (sha256, source, origin, document)
	VALUES (encode(sha256(convert_to(src, 'UTF8')), 'hex'), src, 'migration 0004_gate.sql', doc)
	RETURNING version INTO v;
	PERFORM airlock._gate_apply(v, doc);
END
$$;

-- Ingests a gate policy: `source` is the YAML text, `doc` its normalised form
-- (checked by `airlock seed`, checked again here).  A source identical to the
-- one in force changes nothing.  Returns the version in force.
CREATE FUNCTION airlock.seed_gate(source text, origin text, doc jsonb) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	digest text := encode(sha256(convert_to(source, 'UTF8')), 'hex');
	cur airlock.gate_policies;
	v bigint;
BEGIN
	SELECT * INTO cur FROM airlock.gate_policies ORDER BY version DESC LIMIT 1;
	IF FOUND AND cur.sha256 = digest THEN
		RETURN cur.version;
	END IF;
	INSERT INTO airlock.gate_policies (sha256, source, origin, document)
	VALUES (digest, source, origin, doc) RETURNING version INTO v;
	PERFORM airlock._gate_apply(v, doc);
	RETURN v;
END
$$;

-- Shell-style glob (`*`, `?`) match, for gate rules.
CREATE FUNCTION airlock._glob_match(subject text, glob text) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = airlock, pg_temp AS $$
	SELECT subject LIKE replace(replace(replace(replace(replace(glob, '\', '\\'), '%', '\%'),
		'_', '\_'), '*', '%'), '?', '_')
$$;

-- What the gate asks of one request: the class's quorum and times, made
-- stricter by every matching rule; and the gate version in force.
CREATE FUNCTION airlock._gate_for(target text, agent text, cls text, OUT approvals_required integer,
	OUT ttl interval, OUT approval_valid_for interval, OUT gate_version bigint)
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
DECLARE
	g airlock.gate_policy;
BEGIN
	SELECT * INTO g FROM airlock.gate_policy p WHERE p.class = cls;
	_gate_for.approvals_required := coalesce(g.approvals_required,
		CASE cls WHEN 'destructive' THEN 2 ELSE 1 END);
	_gate_for.ttl := coalesce(g.ttl, interval '1 hour');
	_gate_for.approval_valid_for := coalesce(g.approval_valid_for, interval '15 minutes');
	SELECT greatest(_gate_for.approvals_required, max(r.approvals_required)),
	       least(_gate_for.ttl, min(r.ttl)),
	       least(_gate_for.approval_valid_for, min(r.approval_valid_for))
	INTO _gate_for.approvals_required, _gate_for.ttl, _gate_for.approval_valid_for
	FROM airlock.gate_rules r
	WHERE (r.class IS NULL OR r.class = cls)
	  AND (r.target IS NULL OR airlock._glob_match(_gate_for.target, r.target))
	  AND (r.agent IS NULL OR airlock._glob_match(_gate_for.agent, r.agent));
	SELECT max(p.version) INTO _gate_for.gate_version FROM airlock.gate_policies p;
END
$$;

-- ---------------------------------------------------------------- who may decide (approvers)

-- Why `who` may not decide approvals, or NULL when it may: a superuser
-- bypasses every rule, and an agent's login must never vote for agents'
-- requests, so neither counts even when granted airlock_operator.
CREATE FUNCTION airlock._approver_problem(who text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
DECLARE
	r pg_roles;
BEGIN
	SELECT * INTO r FROM pg_roles WHERE rolname = who;
	IF NOT FOUND THEN
		RETURN 'is no longer a database role';
	ELSIF r.rolsuper THEN
		RETURN 'is a superuser';
	ELSIF pg_has_role(who, 'airlock_agent', 'MEMBER') THEN
		RETURN 'is a member of airlock_agent';
	ELSIF NOT pg_has_role(who, 'airlock_operator', 'MEMBER') THEN
		RETURN 'is not a member of airlock_operator';
	END IF;
	RETURN NULL;
END
$$;

-- Approvals that count toward a row's quorum: for its current payload, by
-- logins that may decide today, never the requester.
CREATE FUNCTION airlock._votes(e airlock.executions) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT count(*)::integer FROM airlock.approvals a
	WHERE a.execution_id = e.id AND a.decision = 'approve' AND a.payload_hash = e.payload_hash
	  AND a.approver <> e.requested_by AND airlock._approver_problem(a.approver) IS NULL
$$;

-- Raises AL009 unless the session user may decide approvals.
CREATE FUNCTION airlock._require_approver(what text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
DECLARE
	why text := airlock._approver_problem(session_user);
BEGIN
	IF why IS NOT NULL THEN
		RAISE EXCEPTION '%: % % and never counts as an approver. Decide as an operator''s own login (a member of airlock_operator that is neither a superuser nor a member of airlock_agent).',
			what, session_user, why USING ERRCODE = 'AL009';
	END IF;
END
$$;

-- ---------------------------------------------------------------- limits

-- The small helpers below run on every agent call.  They carry no SET
-- search_path, so that PostgreSQL can inline them and does not switch
-- settings per call; they name every object with its schema, nobody but
-- airlock's own functions (whose search_path is pinned) may execute them, and
-- none is SECURITY DEFINER.

-- The flood limits in force (the defaults if the row is missing).
CREATE FUNCTION airlock._limits() RETURNS airlock.gate_limits
LANGUAGE sql STABLE AS $$
	SELECT l FROM (SELECT l FROM airlock.gate_limits l
		       UNION ALL SELECT ROW(true, 60, 100, 65536, 256, 256, NULL)::airlock.gate_limits) x
	LIMIT 1
$$;

-- Superusers can change the gate policy itself, so limits do not bind them
-- (bulk loads in tests and maintenance run as the administrator).
CREATE FUNCTION airlock._limits_apply() RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT NOT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = session_user), false)
$$;

-- ---------------------------------------------------------------- attribute keys

-- The first control character, or code point that renders as nothing or
-- reorders text (zero-width, bidi controls, joiners, fillers, variation
-- selectors, tags), in s; NULL when there is none.  Unicode spaces are not
-- here: NFKC turns them into plain spaces.
CREATE FUNCTION airlock._invisible_char(s text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT substring(s FROM '[\u0001-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]')
$$;

CREATE FUNCTION airlock._codepoint(c text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT 'U+' || upper(lpad(to_hex(ascii(c)), 4, '0'))
$$;

-- The form two keys are compared in: lower case, ASCII look-alikes folded
-- (i, 1, | and ! as l; 0 as o; 5 and $ as s; @ as a; rn as m; vv as w),
-- separators and spaces dropped.  Both sides are folded alike, so
-- "container" and "contalner" meet.
CREATE FUNCTION airlock._key_skeleton(k text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT regexp_replace(replace(replace(translate(lower(k), 'i|!05$@1', 'lllossal'), 'rn', 'm'), 'vv', 'w'),
		'[^a-z0-9]', '', 'g')
$$;

-- Each scheduler-owned key's skeleton, computed once (keys added later get
-- theirs on insert).
ALTER TABLE airlock.scheduler_keys
	ADD COLUMN skeleton text GENERATED ALWAYS AS (airlock._key_skeleton(key)) STORED;

-- An agent's attribute key, checked and normalised (NFKC, trimmed).  Raises
-- AL002 for a key with control or invisible characters, one that is empty,
-- too long, or not ASCII once normalised (a key of look-alike letters from
-- another script could pass for any key).
CREATE FUNCTION airlock._attribute_key(k text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	bad text := airlock._invisible_char(k);
	nk text;
BEGIN
	IF bad IS NOT NULL THEN
		RAISE EXCEPTION 'update_entity_attributes: key % contains a control or invisible character (% at character %); keys must show exactly what they are. Nothing was written.',
			to_json(k)::text, airlock._codepoint(bad), strpos(k, bad) USING ERRCODE = 'AL002';
	END IF;
	nk := btrim(normalize(k, NFKC));
	IF nk = '' THEN
		RAISE EXCEPTION 'update_entity_attributes: key % is empty once trimmed. Nothing was written.',
			to_json(k)::text USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(nk) > 128 THEN
		RAISE EXCEPTION 'update_entity_attributes: key %... is % bytes; the limit is 128. Nothing was written.',
			to_json(left(nk, 40))::text, octet_length(nk) USING ERRCODE = 'AL002';
	END IF;
	bad := substring(nk FROM '[^\u0020-\u007e]');
	IF bad IS NOT NULL THEN
		RAISE EXCEPTION 'update_entity_attributes: key % is not plain ASCII after NFKC normalisation (% at character %); attribute keys are ASCII so that no key can pass for another with look-alike letters. Nothing was written.',
			to_json(k)::text, airlock._codepoint(bad), strpos(nk, bad) USING ERRCODE = 'AL002';
	END IF;
	RETURN nk;
END
$$;

-- ---------------------------------------------------------------- probed state and pre-flight

-- What the scheduler last probed about whether the target can run a command
-- at all.  Recorded when a row is approved and compared before it starts.
CREATE FUNCTION airlock._probe_snapshot(slug text) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'qemu_guest_agent', CASE WHEN e.type = 'vm' THEN e.attributes -> 'qemu_guest_agent' END,
		'container_status', CASE WHEN e.type = 'lxc' THEN e.attributes -> 'container_status' END))
	FROM airlock.entities e WHERE e.slug = _probe_snapshot.slug
$$;

-- The pre-flight refusal for a target as probed now (run()'s exact words),
-- or NULL when it may run.
CREATE FUNCTION airlock._preflight_problem(ent airlock.entities, OUT sqlstate text, OUT message text)
LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN ent.type = 'vm' AND coalesce(ent.attributes ->> 'qemu_guest_agent', '') <> 'running'
		    THEN 'AL003'
		    WHEN ent.type = 'lxc' AND ent.attributes ->> 'container_status' = 'stopped' THEN 'AL004' END,
	       CASE WHEN ent.type = 'vm' AND coalesce(ent.attributes ->> 'qemu_guest_agent', '') <> 'running'
		    THEN format('run on %s blocked: QEMU guest agent is not running (qm guest exec unavailable). Start the agent first or use a different target.', ent.slug)
		    WHEN ent.type = 'lxc' AND ent.attributes ->> 'container_status' = 'stopped'
		    THEN format('run on %s blocked: container is not running (pct exec unavailable). Start the container first or use a different target.', ent.slug) END
$$;

-- The transport's rule for what it can carry: the command is sent inside
-- single quotes (each ' becomes '\'', four bytes), and the quoted form plus
-- 128 bytes of wrapper must fit in 32,768.  Mirrors transport_check_command.
CREATE FUNCTION airlock._quoted_length(command text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
	SELECT 2 + octet_length(command)::bigint
		+ 3 * (octet_length(command) - octet_length(replace(command, '''', '')))
$$;

-- ---------------------------------------------------------------- agent API

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

	INSERT INTO airlock.executions (target, target_type, command, declared_risk, change_id, action, requested_by)
	VALUES (ent.slug, ent.type, command, declared_risk, nullif(change_id, ''), nullif(action, ''), session_user)
	RETURNING id INTO new_id;
	PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
		'declared_risk', declared_risk, 'change_id', change_id, 'action', action));
	PERFORM pg_notify('airlock_work', '');
	RETURN new_id;
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
	IF NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = update_entity_attributes.slug) THEN
		RAISE EXCEPTION 'update_entity_attributes: unknown entity "%"', update_entity_attributes.slug
			USING ERRCODE = 'AL001';
	END IF;
	IF limited THEN
		size := octet_length(attributes::text);
		IF size > lim.attribute_bytes THEN
			RAISE EXCEPTION 'update_entity_attributes: the attributes document is % bytes; the gate policy allows % (attribute_bytes). Nothing was written.',
				size, lim.attribute_bytes USING ERRCODE = 'AL010';
		END IF;
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

CREATE OR REPLACE FUNCTION airlock.create_relationship(source text, target text, type text) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	created boolean;
	lim airlock.gate_limits := airlock._limits();
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
	IF NOT EXISTS (SELECT 1 FROM airlock.entities WHERE slug = source) THEN
		RAISE EXCEPTION 'create_relationship: unknown entity "%"', source USING ERRCODE = 'AL001';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM airlock.entities WHERE slug = target) THEN
		RAISE EXCEPTION 'create_relationship: unknown entity "%"', target USING ERRCODE = 'AL001';
	END IF;
	IF airlock._limits_apply() AND NOT EXISTS (SELECT 1 FROM airlock.relationships r
		WHERE r.source = create_relationship.source AND r.target = create_relationship.target
		  AND r.type = create_relationship.type) THEN
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

-- ---------------------------------------------------------------- operator API

CREATE OR REPLACE FUNCTION airlock.approve(id bigint, reason text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	g record;
	votes integer;
BEGIN
	PERFORM airlock._require_approver('approve');
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
		   AND a.payload_hash = e.payload_hash AND a.decision = 'approve') THEN
		RAISE EXCEPTION 'execution %: you already approved it; it needs a different approver', e.id
			USING ERRCODE = 'AL005';
	END IF;
	g := airlock._gate_for(e.target, e.requested_by, e.class);
	INSERT INTO airlock.approvals (execution_id, approver, decision, reason, payload_hash, rewind_status,
		gate_version)
	VALUES (e.id, session_user, 'approve', reason, e.payload_hash, e.rewind_status, g.gate_version)
	ON CONFLICT (execution_id, approver) DO UPDATE
		SET decision = 'approve', reason = EXCLUDED.reason, payload_hash = EXCLUDED.payload_hash,
		    rewind_status = EXCLUDED.rewind_status, gate_version = EXCLUDED.gate_version, at = now();
	votes := airlock._votes(e);
	IF votes < greatest(e.approvals_required, 1) THEN
		PERFORM airlock._event(e.id, e.state, e.state, jsonb_build_object('vote', 'approve',
			'reason', reason, 'approvals', votes, 'required', e.approvals_required,
			'payload_hash', e.payload_hash, 'gate_version', g.gate_version));
		RETURN 'pending_approval';
	END IF;
	UPDATE airlock.executions x SET state = 'approved', decided_at = now(),
		approval_valid_until = now() + g.approval_valid_for,
		approved_probe = airlock._probe_snapshot(e.target)
	WHERE x.id = e.id;
	PERFORM airlock._event(e.id, e.state, 'approved', jsonb_build_object('reason', reason,
		'approvals', votes, 'required', e.approvals_required, 'payload_hash', e.payload_hash,
		'rewind_status', e.rewind_status, 'gate_version', g.gate_version,
		'valid_until', now() + g.approval_valid_for,
		'probed', airlock._probe_snapshot(e.target)));
	PERFORM pg_notify('airlock_work', '');
	RETURN 'approved';
END
$$;

CREATE OR REPLACE FUNCTION airlock.reject(id bigint, reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	gv bigint := (SELECT max(version) FROM airlock.gate_policies);
BEGIN
	PERFORM airlock._require_approver('reject');
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
	INSERT INTO airlock.approvals (execution_id, approver, decision, reason, payload_hash, rewind_status,
		gate_version)
	VALUES (e.id, session_user, 'reject', reason, coalesce(e.payload_hash, ''), e.rewind_status, gv)
	ON CONFLICT (execution_id, approver) DO UPDATE
		SET decision = 'reject', reason = EXCLUDED.reason, gate_version = EXCLUDED.gate_version, at = now();
	UPDATE airlock.executions x SET state = 'rejected', decided_at = now(), finished_at = now() WHERE x.id = e.id;
	PERFORM airlock._event(e.id, e.state, 'rejected', jsonb_build_object('reason', reason, 'gate_version', gv));
	RETURN 'rejected';
END
$$;

-- Moves an approved row whose approval lapsed to expired, with the reason
-- the agent reads.  The caller holds the row locked.
CREATE FUNCTION airlock._lapse(e airlock.executions, noticed_by text) RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	why text := format('the approval given at %s lapsed at %s before the command started (approval_valid_for); nothing ran.',
		to_char(e.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
		to_char(e.approval_valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'));
BEGIN
	UPDATE airlock.executions x SET state = 'expired', finished_at = now(), claimed_by = NULL,
		error = why
	WHERE x.id = e.id;
	PERFORM airlock._event(e.id, 'approved', 'expired', jsonb_build_object('approval_lapsed', true,
		'approved_at', e.decided_at, 'valid_until', e.approval_valid_until, 'why', why,
		'noticed_by', noticed_by));
END
$$;

-- Pending requests past their TTL, and approved ones not started within
-- their approval's validity (and not being worked on), become 'expired'.
-- Returns how many.
CREATE OR REPLACE FUNCTION airlock.expire_pending() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e record;
	x airlock.executions;
	n integer := 0;
BEGIN
	FOR e IN SELECT id, expires_at FROM airlock.executions
		 WHERE state = 'pending_approval' AND expires_at <= now()
		 ORDER BY id FOR UPDATE SKIP LOCKED LOOP
		UPDATE airlock.executions SET state = 'expired', finished_at = now() WHERE id = e.id;
		PERFORM airlock._event(e.id, 'pending_approval', 'expired', jsonb_build_object('expired_at', e.expires_at));
		n := n + 1;
	END LOOP;
	FOR x IN SELECT * FROM airlock.executions
		 WHERE state = 'approved' AND approval_valid_until <= now() AND claimed_by IS NULL
		 ORDER BY id FOR UPDATE SKIP LOCKED LOOP
		PERFORM airlock._lapse(x, 'expire_pending');
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

-- Backstop: an approved row never starts after its approval lapsed, nor
-- with fewer counting votes than its quorum (an approver who has since become
-- a superuser or an agent), whoever tries: worker_start raises, the worker
-- records a refusal, nothing runs.
CREATE FUNCTION airlock._approval_in_force() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	votes integer;
BEGIN
	IF OLD.approval_valid_until IS NOT NULL AND OLD.approval_valid_until < now() THEN
		RAISE EXCEPTION 'execution %: its approval lapsed at % (approval_valid_for); it may not start',
			OLD.id, OLD.approval_valid_until USING ERRCODE = 'AL008';
	END IF;
	votes := airlock._votes(OLD);
	IF votes < greatest(OLD.approvals_required, 1) THEN
		RAISE EXCEPTION 'execution %: only % of % approvals count (by logins that may approve); it may not start',
			OLD.id, votes, OLD.approvals_required USING ERRCODE = 'AL008';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER executions_approval_in_force BEFORE UPDATE OF state ON airlock.executions
	FOR EACH ROW WHEN (OLD.state = 'approved' AND NEW.state = 'running')
	EXECUTE FUNCTION airlock._approval_in_force();

-- ---------------------------------------------------------------- worker side

-- Sets what pending_approval needs: quorum, expiry, the gate version that
-- decided them; any earlier approval's validity is forgotten.
CREATE OR REPLACE FUNCTION airlock._hold_for_approval(exec_id bigint, cls text) RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	g record;
BEGIN
	SELECT * INTO e FROM airlock.executions WHERE id = exec_id;
	g := airlock._gate_for(e.target, e.requested_by, cls);
	UPDATE airlock.executions SET state = 'pending_approval', claimed_by = NULL,
		approvals_required = g.approvals_required, expires_at = now() + g.ttl,
		gate_version = g.gate_version, approval_valid_until = NULL, approved_probe = NULL
	WHERE id = exec_id;
	PERFORM pg_advisory_unlock(exec_id);
	PERFORM pg_notify('airlock_pending', '');
END
$$;

-- Re-validation right before executing a queued or approved row, with the
-- classification under the policy now in force.  Returns the row's state:
-- unchanged when it may go on; 'expired' when its approval lapsed
-- (approval_valid_for); 'refused' when the target, as probed now, can no
-- longer run it (the pre-flight's words); 'pending_approval' when the class
-- rose, when fewer approvals than the quorum still count (payload changed,
-- or an approver no longer may decide), or when the target's probed state
-- changed since the approval in another way: the approval is void and the
-- row waits for a human again.  Every outcome is an event saying why.
CREATE OR REPLACE FUNCTION airlock.worker_revalidate(exec_id bigint, worker text, cls text, reasons jsonb,
	policy_version bigint, classifier_version text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	ent airlock.entities;
	pf record;
	probed jsonb;
	changed text;
	final text;
	votes integer;
	why text;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
	final := CASE WHEN airlock._class_rank(e.declared_risk) > airlock._class_rank(cls)
		      THEN e.declared_risk ELSE cls END;
	IF e.state = 'approved' THEN
		IF e.approval_valid_until IS NOT NULL AND e.approval_valid_until <= now() THEN
			PERFORM airlock._lapse(e, worker);
			PERFORM pg_advisory_unlock(exec_id);
			RETURN 'expired';
		END IF;
		SELECT * INTO ent FROM airlock.entities WHERE slug = e.target;
		probed := airlock._probe_snapshot(e.target);
		SELECT string_agg(format('%s: %s -> %s', k.key, k.value, coalesce(probed -> k.key, 'null')), ', ' ORDER BY k.key)
		INTO changed FROM jsonb_each(coalesce(e.approved_probe, '{}')) k
		WHERE probed -> k.key IS DISTINCT FROM k.value;
		pf := airlock._preflight_problem(ent);
		IF pf.sqlstate IS NOT NULL THEN
			UPDATE airlock.executions x SET state = 'refused', finished_at = now(), claimed_by = NULL,
				error = pf.message || ' The target changed since the approval; nothing ran.'
			WHERE x.id = exec_id;
			PERFORM airlock._event(exec_id, 'approved', 'refused', jsonb_build_object(
				'reason', pf.message, 'probed_at_approval', e.approved_probe, 'probed_now', probed,
				'worker', worker));
			PERFORM pg_advisory_unlock(exec_id);
			RETURN 'refused';
		END IF;
		votes := airlock._votes(e);
		IF e.payload_hash IS DISTINCT FROM airlock._payload_hash(e.target, e.command, e.class, e.policy_version) THEN
			why := 'the row no longer matches the payload that was approved';
		ELSIF votes < greatest(e.approvals_required, 1) THEN
			why := format('only %s of %s approvals still count (same payload, by logins that may approve)',
				votes, e.approvals_required);
		ELSIF changed IS NOT NULL THEN
			why := format('the target''s probed state changed since the approval (%s)', changed);
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
		'policy_version', policy_version, 'worker', worker,
		'gate_version', (SELECT x.gate_version FROM airlock.executions x WHERE x.id = exec_id)));
	RETURN 'pending_approval';
END
$$;

-- Records one event and tells listeners.  Notifications carry no payload:
-- any login can LISTEN on any channel, so a payload would show every
-- agent's request ids and states to every other agent.  A listener re-reads
-- what it may see.
CREATE OR REPLACE FUNCTION airlock._event(exec_id bigint, from_state text, to_state text, detail jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	INSERT INTO airlock.execution_events (id, execution_id, actor, from_state, to_state, detail, prev_hash, hash)
	VALUES (0, exec_id, session_user, from_state, to_state, coalesce(detail, '{}'), '', '');
	IF from_state IS DISTINCT FROM to_state THEN
		PERFORM pg_notify('airlock_state', '');
	END IF;
END
$$;

-- As in 0002, with a payload-free wake-up (see _event).
CREATE OR REPLACE FUNCTION airlock.worker_release(exec_id bigint, worker text, delay_ms integer, reason text)
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
	PERFORM pg_notify('airlock_work', '');
END
$$;

-- As in 0002, with a payload-free wake-up (see _event).
CREATE OR REPLACE FUNCTION airlock.worker_reap() RETURNS integer
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
			PERFORM pg_notify('airlock_work', '');
		END IF;
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

-- ---------------------------------------------------------------- what the agent is told

CREATE OR REPLACE FUNCTION airlock._next_step(e airlock.executions) RETURNS text
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
		'Approved; it will run shortly. '
		|| coalesce('The approval holds until '
			|| to_char(e.approval_valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"')
			|| '; if it has not started by then, it expires. ', '')
		|| 'Wait for the result. Do not go around airlock: raw SSH or another tool is not an option.'
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
		CASE WHEN e.decided_at IS NOT NULL THEN
			'Approved, but it did not start in time: ' || coalesce(e.error, 'the approval lapsed; nothing ran.')
			|| ' Ask your operator whether it is still wanted, then submit it again for a fresh approval; do not run it another way.'
		ELSE
			'No operator decided before it expired. Ask your operator before submitting it again; do not run it another way.'
		END
	WHEN 'cancelled' THEN 'Cancelled; nothing ran.'
	WHEN 'refused' THEN
		'Refused before anything ran: ' || coalesce(e.error, 'see the history') ||
		' Fix the cause or ask your operator; do not run it another way.'
	WHEN 'outcome_unknown' THEN
		'The worker or its link died while the command was running: it may or may not have taken effect. '
		|| 'It will not be re-run automatically. Ask your operator to check the target before doing anything else.'
	END
$$;

-- As in 0001; approvals counts only votes that count (see _votes), and the
-- gate version that set the quorum and expiry is shown.
CREATE OR REPLACE VIEW airlock.pending AS
	SELECT e.id, e.target, e.target_type, e.command, e.class, e.reasons, e.requested_by,
	       e.change_id, e.action, e.created_at, e.classified_at, e.expires_at,
	       now() - e.created_at AS age, e.expires_at - now() AS expires_in,
	       e.approvals_required,
	       airlock._votes(e)::bigint AS approvals,
	       e.rewind_status, e.rewind_possible, e.gate_version
	FROM airlock.executions e
	WHERE e.state = 'pending_approval'
	ORDER BY e.created_at, e.id;

-- ---------------------------------------------------------------- ownership and grants

SELECT airlock._secure_new_objects();

GRANT SELECT ON airlock.gate_policies, airlock.gate_rules, airlock.gate_limits
TO airlock_operator, airlock_worker;
GRANT SELECT ON airlock.gate_policy, airlock.gate_limits TO airlock_agent;
-- The pending view counts votes with it.
GRANT EXECUTE ON FUNCTION airlock._votes(airlock.executions) TO airlock_operator, airlock_worker;
