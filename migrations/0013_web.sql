-- 0013_web.sql -- the operator's console (airlock-web): its own service role,
-- the history of sign-ins and of decisions made in it, TOTP second factors
-- per operator, and the blast radius of a request.
--
-- Identity in the console is the operator's own login: airlock-web connects
-- to PostgreSQL as that login, so approve() and reject() apply their rules
-- unchanged.  The service role airlock_web exists for what happens before a
-- login is proven (recording a failed sign-in, reading the second factor's
-- secret to check a code) and for LISTEN.  It decides nothing.

DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'airlock_web') THEN
		CREATE ROLE airlock_web NOLOGIN;
	END IF;
END
$$;
GRANT USAGE ON SCHEMA airlock TO airlock_web;

-- Every sign-in (accepted or not), sign-out and decision made in the console.
CREATE TABLE airlock.web_history (
	id        bigserial PRIMARY KEY,
	at        timestamptz NOT NULL DEFAULT clock_timestamp(),
	kind      text NOT NULL CHECK (kind IN ('sign_in', 'sign_in_failed', 'sign_out', 'decision')),
	login     text NOT NULL CHECK (octet_length(login) <= 200),
	address   text NOT NULL CHECK (octet_length(address) <= 100),
	execution_id bigint REFERENCES airlock.executions (id),
	detail    text CHECK (octet_length(detail) <= 2000)
);
CREATE INDEX web_history_login ON airlock.web_history (login, id);

-- TOTP secrets (RFC 6238: HMAC-SHA1, 30 s steps, 6 digits).  No role may
-- read this table: the secret leaves it only through web_totp_secret(),
-- which only airlock_web may call, so an operator's password alone never
-- yields the second factor.  last_step refuses a code used twice.
CREATE TABLE airlock.operator_totp (
	login       text PRIMARY KEY CHECK (octet_length(login) <= 200),
	secret      bytea NOT NULL CHECK (octet_length(secret) BETWEEN 16 AND 64),
	enrolled_by text NOT NULL,
	enrolled_at timestamptz NOT NULL DEFAULT now(),
	last_step   bigint NOT NULL DEFAULT 0
);

-- A sign-in that failed before a login was proven (wrong password, unknown
-- login, rate limit): recorded by airlock-web's own connection.
CREATE FUNCTION airlock.web_sign_in_failed(login text, address text, reason text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	INSERT INTO airlock.web_history (kind, login, address, detail)
	VALUES ('sign_in_failed', left(login, 200), left(address, 100), left(reason, 2000))
$$;

-- Whether `login` must give a TOTP code, and the secret to check it with.
CREATE FUNCTION airlock.web_totp_secret(login text, OUT enrolled boolean, OUT secret bytea,
	OUT last_step bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT t.secret IS NOT NULL, t.secret, coalesce(t.last_step, 0)
	FROM (SELECT 1) one LEFT JOIN airlock.operator_totp t ON t.login = web_totp_secret.login
$$;

-- Marks a time step used; false when it (or a later one) already was, so a
-- code seen once is never accepted again.
CREATE FUNCTION airlock.web_totp_use(login text, step bigint) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	UPDATE airlock.operator_totp t SET last_step = web_totp_use.step
	WHERE t.login = web_totp_use.login AND t.last_step < web_totp_use.step;
	RETURN FOUND;
END
$$;

-- Records an accepted sign-in, as the operator's own connection: refuses a
-- login that may not decide approvals (a superuser, an agent, a login
-- outside airlock_operator) with the same reason approve() gives.
CREATE FUNCTION airlock.web_signed_in(address text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM airlock._require_approver('sign in to the console');
	INSERT INTO airlock.web_history (kind, login, address) VALUES ('sign_in', session_user, left(address, 100));
	RETURN session_user;
END
$$;

CREATE FUNCTION airlock.web_signed_out(address text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	INSERT INTO airlock.web_history (kind, login, address) VALUES ('sign_out', session_user, left(address, 100))
$$;

-- Records a decision made in the console, in the same transaction as the
-- approve() or reject() it describes.
CREATE FUNCTION airlock.web_decided(exec_id bigint, address text, detail text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	INSERT INTO airlock.web_history (kind, login, address, execution_id, detail)
	VALUES ('decision', session_user, left(address, 100), exec_id, left(detail, 2000))
$$;

-- Enrols (or replaces) a TOTP secret.  An operator may enrol only their own
-- login, and only once: replacing a secret would let a stolen password
-- defeat the second factor, so that takes an administrator (a superuser or
-- airlock_owner), who may enrol any operator.
CREATE FUNCTION airlock.totp_enroll(login text, secret bytea) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	admin boolean := (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user)
		OR pg_has_role(session_user, 'airlock_owner', 'MEMBER');
BEGIN
	IF octet_length(secret) < 16 OR octet_length(secret) > 64 THEN
		RAISE EXCEPTION 'totp enroll: a secret is 16 to 64 bytes' USING ERRCODE = 'AL002';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = totp_enroll.login) THEN
		RAISE EXCEPTION 'totp enroll: there is no login "%"', totp_enroll.login USING ERRCODE = 'AL007';
	END IF;
	IF airlock._approver_problem(totp_enroll.login) IS NOT NULL THEN
		RAISE EXCEPTION 'totp enroll: "%" %; only operators sign in to the console',
			totp_enroll.login, airlock._approver_problem(totp_enroll.login) USING ERRCODE = 'AL009';
	END IF;
	IF NOT admin THEN
		IF totp_enroll.login <> session_user THEN
			RAISE EXCEPTION 'totp enroll: you (%) may enrol only your own login; an administrator enrols others',
				session_user USING ERRCODE = '42501';
		END IF;
		IF EXISTS (SELECT 1 FROM airlock.operator_totp t WHERE t.login = totp_enroll.login) THEN
			RAISE EXCEPTION 'totp enroll: % already has a second factor; replacing it takes an administrator',
				session_user USING ERRCODE = '42501';
		END IF;
	END IF;
	INSERT INTO airlock.operator_totp (login, secret, enrolled_by)
	VALUES (totp_enroll.login, totp_enroll.secret, session_user)
	ON CONFLICT ON CONSTRAINT operator_totp_pkey DO UPDATE SET secret = EXCLUDED.secret, enrolled_by = EXCLUDED.enrolled_by,
		enrolled_at = now(), last_step = 0;
END
$$;

-- ---------------------------------------------------------------- blast radius

-- The guests a host command names, wherever they stand in it (after sudo or
-- a path, in a chain, inside sh -c '...', quoted): `qm VERB [SUBVERB]
-- [OPTIONS] N`, `pct VERB [OPTIONS] N` and `qmrestore ARCHIVE N`.  A guest
-- named through a variable or a loop is not resolved; the command itself is
-- on the page.
CREATE FUNCTION airlock._named_guests(command text, OUT tool text, OUT verb text, OUT vmid integer)
RETURNS SETOF record
LANGUAGE sql IMMUTABLE SET search_path = airlock, pg_temp AS $$
	SELECT DISTINCT x.tool, x.verb, x.id::integer FROM (
		SELECT m[2] AS tool, regexp_replace(m[3], '[[:space:]]+', ' ', 'g') AS verb, m[4]::bigint AS id
		FROM regexp_matches(command,
			'(^|[^A-Za-z0-9_.-])(qm|pct)[[:space:]]+([a-z][a-z-]*(?:[[:space:]]+[a-z][a-z-]*)?)[[:space:]]+'
			'(?:--?[A-Za-z][A-Za-z-]*(?:[[:space:]]+[^-[:space:]][^[:space:]]*)?[[:space:]]+)*'
			'[''"]?([0-9]{3,9})[''"]?(?=[^0-9]|$)', 'g') AS m
		UNION ALL
		SELECT 'qm', 'restore', m[2]::bigint
		FROM regexp_matches(command,
			'(^|[^A-Za-z0-9_.-])qmrestore[[:space:]]+[^[:space:]]+[[:space:]]+[''"]?([0-9]{3,9})[''"]?(?=[^0-9]|$)',
			'g') AS m) x
	WHERE x.id BETWEEN 100 AND 999999999
$$;

-- What a request can reach, one row per thing: the target's relations in
-- both directions, the node a guest runs on, and for a host command the
-- guests it names (with their own relations).  Each entity's protection is
-- what the estate knows of it: for a VM the name Zerto knows it by (its
-- zerto_vm_identifier, else its slug's name; NULL for a host or a container,
-- which Zerto does not protect), and the rewind status last recorded for a
-- request on it.
CREATE FUNCTION airlock.blast_radius(exec_id bigint)
RETURNS TABLE (kind text, entity text, relation text, via text, zerto_vm text, rewind_status text,
	rewind_seen timestamptz, note text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	WITH e AS (SELECT x.* FROM airlock.executions x WHERE x.id = blast_radius.exec_id),
	t AS (SELECT en.* FROM airlock.entities en JOIN e ON en.slug = e.target),
	named AS (
		SELECT n.tool, n.verb, n.vmid, g.slug
		FROM e JOIN t ON t.type = 'proxmox-host'
		CROSS JOIN LATERAL airlock._named_guests(e.command) n
		LEFT JOIN airlock.entities g ON g.node = t.slug AND g.vmid = n.vmid
			AND g.type = CASE n.tool WHEN 'qm' THEN 'vm' ELSE 'lxc' END),
	subjects AS (
		SELECT t.slug AS slug, NULL::text AS via FROM t
		UNION SELECT named.slug, 'via ' || named.slug FROM named WHERE named.slug IS NOT NULL),
	last_rewind AS (
		SELECT DISTINCT ON (x.target) x.target, x.rewind_status, x.classified_at
		FROM airlock.executions x
		WHERE x.rewind_status IS NOT NULL AND x.target IN (SELECT slug FROM subjects)
		  AND x.id <> blast_radius.exec_id
		ORDER BY x.target, x.classified_at DESC NULLS LAST, x.id DESC),
	rows AS (
		SELECT 1 AS ord, 'named_guest' AS kind, coalesce(named.slug, named.tool || ' ' || named.vmid) AS entity,
		       named.tool || ' ' || named.verb AS relation, NULL::text AS via,
		       CASE WHEN named.slug IS NULL THEN
		            format('no %s %s on this node in the inventory', CASE named.tool WHEN 'qm' THEN 'VM' ELSE 'container' END, named.vmid)
		       END AS note
		FROM named
		UNION ALL
		SELECT 2, 'node', t.node, 'runs on', NULL, NULL FROM t WHERE t.node IS NOT NULL
		UNION ALL
		SELECT 3, 'relation', r.target, r.type || ' (out)', s.via, NULL
		FROM subjects s JOIN airlock.relationships r ON r.source = s.slug
		UNION ALL
		SELECT 3, 'relation', r.source, r.type || ' (in)', s.via, NULL
		FROM subjects s JOIN airlock.relationships r ON r.target = s.slug
		UNION ALL
		SELECT 4, 'guest', g.slug, 'runs here', NULL, NULL
		FROM t JOIN airlock.entities g ON g.node = t.slug)
	SELECT rows.kind, rows.entity, rows.relation,
	       CASE WHEN rows.via IS NULL THEN NULL ELSE rows.via END,
	       CASE WHEN en.type = 'vm' THEN coalesce(en.zerto_vm_identifier, split_part(en.slug, ':', 2)) END,
	       lr.rewind_status, lr.classified_at, rows.note
	FROM rows
	LEFT JOIN airlock.entities en ON en.slug = rows.entity
	LEFT JOIN last_rewind lr ON lr.target = rows.entity
	ORDER BY rows.ord, rows.entity, rows.relation
$$;

SELECT airlock._secure_new_objects();

GRANT SELECT ON airlock.web_history TO airlock_operator;
REVOKE ALL ON airlock.operator_totp FROM PUBLIC, airlock_operator, airlock_agent, airlock_worker,
	airlock_scheduler, airlock_web;
GRANT EXECUTE ON FUNCTION
	airlock.web_sign_in_failed(text, text, text),
	airlock.web_totp_secret(text),
	airlock.web_totp_use(text, bigint)
TO airlock_web;
GRANT EXECUTE ON FUNCTION
	airlock.web_signed_in(text),
	airlock.web_signed_out(text),
	airlock.web_decided(bigint, text, text),
	airlock.totp_enroll(text, bytea),
	airlock.blast_radius(bigint)
TO airlock_operator;
