-- 0033_console.sql -- decide in five seconds, from the message that asked.
--
-- * Where the console is: airlock-web publishes its public_url here, and
--   airlock.console_url() builds every console address airlock hands out
--   (webhooks, next_step, the agents' answers, the command line's hints).
-- * Action links: a notification carries an approve and a reject link for
--   the request, signed with a key only the database holds and bound to the
--   request, its payload hash, the operator it was sent to and the
--   request's expiry.  Opening one decides nothing: the console shows a
--   confirmation page to the operator signed in as their own login, and only
--   that page's form, once, decides (action_link_use(), which calls
--   approve() or reject() as that login).
-- * Chat identities: an administrator maps a chat user (Slack, Mattermost)
--   to a database login; a button pressed in the chat reaches the same
--   confirmation through a link made for that login.  Every mapping and
--   unmapping is kept.
-- * Hard-to-read commands (gate.yaml hard_to_read): hidden characters,
--   direction-changing ones, or a command longer than a screen either need
--   every approver's explicit confirmation that they read it (approve(...,
--   confirmed => true)) or one more approver than the class asks.
-- * Notifications say what the agent said the change is for, and carry the
--   links.
-- * Seeding an inventory names the entity or relationship a refusal is
--   about (DETAIL entities[N] / relationships[N]), refuses two guests with
--   one VMID on one node and a node that is no host, and writes nothing.
--
-- New SQLSTATEs:
--   AL021  the command is hard to read: approve it with confirmed => true
--   AL022  the action link is not valid (altered, used, expired, sent to
--          someone else, or its request changed or was decided)

-- ---------------------------------------------------------------- where the console is

CREATE TABLE airlock.console_location (
	one          boolean PRIMARY KEY DEFAULT true CHECK (one),
	public_url   text NOT NULL CHECK (octet_length(public_url) <= 500
	                 AND public_url ~ '^https?://[A-Za-z0-9.:\[\]-]+(/[A-Za-z0-9._~%/-]*)?$'),
	published_by text NOT NULL,
	published_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE airlock.console_location IS
	'The console''s address as people reach it (airlock-web''s public_url), for the links airlock hands out.';

-- airlock-web's own login records its public_url when it starts.
CREATE FUNCTION airlock.web_publish_url(url text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF url IS NULL OR url !~ '^https?://[A-Za-z0-9.:\[\]-]+(/[A-Za-z0-9._~%/-]*)?$'
	   OR octet_length(url) > 500 THEN
		RAISE EXCEPTION 'web_publish_url: "%" is not an http:// or https:// address without a query', url
			USING ERRCODE = 'AL002';
	END IF;
	INSERT INTO airlock.console_location AS c (public_url, published_by)
	VALUES (rtrim(url, '/'), session_user)
	ON CONFLICT (one) DO UPDATE SET public_url = EXCLUDED.public_url,
		published_by = EXCLUDED.published_by, published_at = now()
	WHERE c.public_url IS DISTINCT FROM EXCLUDED.public_url;
END
$$;

-- The one builder of console addresses: the published address (else
-- fallback, a daemon's notifications.base_url) followed by path, which starts
-- with a slash.  NULL when no address is known.
CREATE FUNCTION airlock.console_url(path text, fallback text DEFAULT NULL) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT rtrim(coalesce((SELECT c.public_url FROM airlock.console_location c), fallback), '/') || path
	WHERE path LIKE '/%'
$$;

-- The request's page, as a path (the console serves it; an action link's
-- page is /a/TOKEN).
CREATE FUNCTION airlock.console_request_path(id bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT '/r/' || id $$;

-- ---------------------------------------------------------------- action links

-- HMAC-SHA256's padded keys (RFC 2104) of one random 256-bit key made here.
-- No role may read it; the functions below use it as airlock_owner.
CREATE TABLE airlock.action_key (
	one        boolean PRIMARY KEY DEFAULT true CHECK (one),
	inner_pad  bytea NOT NULL CHECK (octet_length(inner_pad) = 64),
	outer_pad  bytea NOT NULL CHECK (octet_length(outer_pad) = 64),
	created_at timestamptz NOT NULL DEFAULT now()
);
DO $$
DECLARE
	k bytea := sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())
		|| uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));
	ip bytea := '\x'::bytea;
	op bytea := '\x'::bytea;
	b integer;
BEGIN
	k := k || decode(repeat('00', 64 - octet_length(k)), 'hex');
	FOR i IN 0..63 LOOP
		b := get_byte(k, i);
		ip := ip || decode(lpad(to_hex(b # 54), 2, '0'), 'hex');
		op := op || decode(lpad(to_hex(b # 92), 2, '0'), 'hex');
	END LOOP;
	INSERT INTO airlock.action_key (inner_pad, outer_pad) VALUES (ip, op);
END
$$;

CREATE FUNCTION airlock._action_mac(msg bytea) RETURNS bytea
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT sha256(k.outer_pad || sha256(k.inner_pad || msg)) FROM airlock.action_key k
$$;

-- One link: what it decides, for whom, on which payload, until when.  The
-- token handed out is hex(nonce) followed by the first 16 bytes of the HMAC
-- of all of that, in hex: 64 characters.  Only the nonce is kept; the rest
-- of the token is computed again to check it, so a copy of this table
-- yields no usable link.
CREATE TABLE airlock.action_links (
	nonce        bytea PRIMARY KEY CHECK (octet_length(nonce) = 16),
	execution_id bigint NOT NULL REFERENCES airlock.executions (id),
	decision     text NOT NULL CHECK (decision IN ('approve', 'reject')),
	operator     text CHECK (octet_length(operator) <= 200), -- sent to; NULL: any operator
	payload_hash text NOT NULL,
	expires_at   timestamptz NOT NULL,
	sent_via     text NOT NULL CHECK (octet_length(sent_via) <= 200),
	delivery_id  bigint REFERENCES airlock.notification_deliveries (id),
	chat_user    text CHECK (octet_length(chat_user) <= 200),
	created_at   timestamptz NOT NULL DEFAULT now(),
	used_at      timestamptz,
	used_by      text,
	outcome      text,
	UNIQUE (delivery_id, decision)
);
CREATE INDEX action_links_execution ON airlock.action_links (execution_id);
COMMENT ON TABLE airlock.action_links IS
	'Signed single-use approve/reject links sent in notifications: bound to the request, its payload hash, the operator and the expiry.';

CREATE FUNCTION airlock._action_token(l airlock.action_links) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT encode(l.nonce, 'hex') || encode(substring(airlock._action_mac(l.nonce || convert_to(
		concat_ws('|', l.execution_id, l.decision, coalesce(l.operator, ''), l.payload_hash,
			extract(epoch FROM l.expires_at)::text), 'UTF8')) FROM 1 FOR 16), 'hex')
$$;

-- A new link for a pending request (NULL when it is not pending); the
-- same one again for a delivery that already has one (a retry).
CREATE FUNCTION airlock._action_mint(exec_id bigint, decision text, operator text, via text,
	delivery bigint DEFAULT NULL, chat_user text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	l airlock.action_links;
BEGIN
	IF delivery IS NOT NULL THEN
		SELECT * INTO l FROM airlock.action_links x
		WHERE x.delivery_id = delivery AND x.decision = _action_mint.decision;
		IF FOUND THEN
			RETURN airlock._action_token(l);
		END IF;
	END IF;
	SELECT * INTO e FROM airlock.executions x WHERE x.id = exec_id;
	IF NOT FOUND OR e.state <> 'pending_approval' OR e.payload_hash IS NULL THEN
		RETURN NULL;
	END IF;
	INSERT INTO airlock.action_links (nonce, execution_id, decision, operator, payload_hash,
		expires_at, sent_via, delivery_id, chat_user)
	VALUES (substring(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())) FROM 1 FOR 16),
		exec_id, decision, operator, e.payload_hash,
		coalesce(e.expires_at, now() + interval '1 hour'), via, delivery, chat_user)
	RETURNING * INTO l;
	RETURN airlock._action_token(l);
END
$$;

-- The link a token names (its nonce, request, decision and the operator it
-- was sent to), and why it cannot decide now for the login `who` (problem;
-- NULL: it can).  The order of the checks is the order of the page's
-- sentences: not ours, used, someone else's, the request moved on, expired,
-- changed.  With lock, the link and its request are locked.
CREATE FUNCTION airlock._action_check(token text, who text, lock boolean,
	OUT link_nonce bytea, OUT link_execution bigint, OUT link_decision text,
	OUT link_operator text, OUT problem text)
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	l airlock.action_links;
	e airlock.executions;
BEGIN
	IF token IS NULL OR token !~ '^[0-9a-f]{64}$' THEN
		problem := 'this is not a link airlock sent (it is malformed)';
		RETURN;
	END IF;
	IF lock THEN
		SELECT * INTO l FROM airlock.action_links x
		WHERE x.nonce = decode(substring(token FROM 1 FOR 32), 'hex') FOR UPDATE;
	ELSE
		SELECT * INTO l FROM airlock.action_links x
		WHERE x.nonce = decode(substring(token FROM 1 FOR 32), 'hex');
	END IF;
	IF l.nonce IS NULL OR airlock._action_token(l) <> token THEN
		problem := 'this is not a link airlock sent, or it was altered';
		RETURN;
	END IF;
	link_nonce := l.nonce;
	link_execution := l.execution_id;
	link_decision := l.decision;
	link_operator := l.operator;
	IF l.used_at IS NOT NULL THEN
		problem := format('this link was already used (%s by %s at %s); a link decides once',
			l.outcome, l.used_by, to_char(l.used_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'));
		RETURN;
	END IF;
	IF l.operator IS NOT NULL AND l.operator <> who THEN
		problem := format('this link was sent to %s, and you are signed in as %s: only %s can use it. Open request %s from your Pending page to decide it yourself',
			l.operator, who, l.operator, l.execution_id);
		RETURN;
	END IF;
	IF lock THEN
		SELECT * INTO e FROM airlock.executions x WHERE x.id = l.execution_id FOR UPDATE;
	ELSE
		SELECT * INTO e FROM airlock.executions x WHERE x.id = l.execution_id;
	END IF;
	IF e.state <> 'pending_approval' THEN
		problem := format('request %s is %s now: there is nothing left to decide', e.id, e.state);
	ELSIF l.expires_at <= now() THEN
		problem := format('this link expired at %s, with the request''s time to decide',
			to_char(l.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'));
	ELSIF e.payload_hash IS DISTINCT FROM l.payload_hash THEN
		problem := format('request %s changed since this link was sent (it was classified again): read it again on its page, then decide there',
			e.id);
	END IF;
END
$$;

-- For the confirmation page, as the operator's own login: the request the
-- link is for, what it decides, whom it was sent to, and why it cannot
-- decide (NULL: it can, once confirmed).
CREATE FUNCTION airlock.action_link(token text, OUT execution_id bigint, OUT decision text,
	OUT sent_to text, OUT problem text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM airlock._require_approver('open an action link');
	SELECT c.link_execution, c.link_decision, c.link_operator, c.problem
	INTO action_link.execution_id, action_link.decision, action_link.sent_to, action_link.problem
	FROM airlock._action_check(token, session_user, false) c;
END
$$;

-- The confirmation page's form: uses the link once and decides as the
-- operator's own login, with every rule of approve() and reject().  A
-- refusal (by this function or by approve/reject) leaves the link unused.
CREATE FUNCTION airlock.action_link_use(token text, reason text DEFAULT NULL,
	confirmed boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	c record;
	result text;
BEGIN
	PERFORM airlock._require_approver('use an action link');
	SELECT * INTO c FROM airlock._action_check(token, session_user, true);
	IF c.problem IS NOT NULL THEN
		RAISE EXCEPTION 'action link: %. Nothing was decided.', c.problem USING ERRCODE = 'AL022';
	END IF;
	IF c.link_decision = 'approve' THEN
		result := airlock.approve(c.link_execution, reason, confirmed);
	ELSE
		result := airlock.reject(c.link_execution, reason);
	END IF;
	UPDATE airlock.action_links x SET used_at = now(), used_by = session_user,
		outcome = c.link_decision || ': ' || result
	WHERE x.nonce = c.link_nonce;
	RETURN result;
END
$$;

-- ---------------------------------------------------------------- chat identities

CREATE TABLE airlock.chat_identities (
	service   text NOT NULL CHECK (service IN ('slack', 'mattermost')),
	chat_user text NOT NULL CHECK (chat_user ~ '^[A-Za-z0-9._@-]{1,100}$'),
	login     text NOT NULL CHECK (octet_length(login) <= 200),
	mapped_by text NOT NULL,
	mapped_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (service, chat_user)
);
COMMENT ON TABLE airlock.chat_identities IS
	'Which database login a chat user is (administrators map them); a chat button reaches the console''s confirmation as that login.';

CREATE TABLE airlock.chat_identity_log (
	id        bigserial PRIMARY KEY,
	at        timestamptz NOT NULL DEFAULT clock_timestamp(),
	service   text NOT NULL,
	chat_user text NOT NULL,
	login     text,
	change    text NOT NULL CHECK (change IN ('map', 'unmap')),
	by_login  text NOT NULL
);
CREATE TRIGGER chat_identity_log_no_update BEFORE UPDATE OR DELETE ON airlock.chat_identity_log
	FOR EACH ROW EXECUTE FUNCTION airlock._append_only();
CREATE TRIGGER chat_identity_log_no_truncate BEFORE TRUNCATE ON airlock.chat_identity_log
	FOR EACH STATEMENT EXECUTE FUNCTION airlock._append_only();

CREATE FUNCTION airlock._require_administrator(what text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
BEGIN
	IF NOT ((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user)
	        OR pg_has_role(session_user, 'airlock_owner', 'MEMBER')) THEN
		RAISE EXCEPTION '%: only an administrator (a superuser or a member of airlock_owner) may; you are %',
			what, session_user USING ERRCODE = '42501';
	END IF;
END
$$;

-- Maps a chat user to an operator's login (replacing an earlier mapping).
CREATE FUNCTION airlock.chat_map(service text, chat_user text, login text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	why text;
BEGIN
	PERFORM airlock._require_administrator('chat map');
	IF service IS NULL OR service NOT IN ('slack', 'mattermost') THEN
		RAISE EXCEPTION 'chat map: the service is slack or mattermost, not "%"', service
			USING ERRCODE = 'AL002';
	END IF;
	IF chat_user IS NULL OR chat_user !~ '^[A-Za-z0-9._@-]{1,100}$' THEN
		RAISE EXCEPTION 'chat map: "%" is not a chat user id (letters, digits, . _ @ -; at most 100), such as Slack''s U024BE7LH',
			chat_user USING ERRCODE = 'AL002';
	END IF;
	why := airlock._approver_problem(login);
	IF why IS NOT NULL THEN
		RAISE EXCEPTION 'chat map: "%" %; a chat user maps only to an operator''s own login', login, why
			USING ERRCODE = 'AL009';
	END IF;
	INSERT INTO airlock.chat_identities AS c (service, chat_user, login, mapped_by)
	VALUES (service, chat_user, login, session_user)
	ON CONFLICT ON CONSTRAINT chat_identities_pkey DO UPDATE SET login = EXCLUDED.login,
		mapped_by = EXCLUDED.mapped_by, mapped_at = now();
	INSERT INTO airlock.chat_identity_log (service, chat_user, login, change, by_login)
	VALUES (service, chat_user, login, 'map', session_user);
END
$$;

CREATE FUNCTION airlock.chat_unmap(service text, chat_user text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	was text;
BEGIN
	PERFORM airlock._require_administrator('chat unmap');
	DELETE FROM airlock.chat_identities c
	WHERE c.service = chat_unmap.service AND c.chat_user = chat_unmap.chat_user
	RETURNING c.login INTO was;
	IF was IS NULL THEN
		RETURN false;
	END IF;
	INSERT INTO airlock.chat_identity_log (service, chat_user, login, change, by_login)
	VALUES (service, chat_user, was, 'unmap', session_user);
	RETURN true;
END
$$;

ALTER TABLE airlock.web_history DROP CONSTRAINT web_history_kind_check;
ALTER TABLE airlock.web_history ADD CONSTRAINT web_history_kind_check
	CHECK (kind IN ('sign_in', 'sign_in_failed', 'sign_out', 'decision', 'chat_action'));

-- A chat button, as airlock-web's own login once the chat's signature was
-- verified: the mapped login, and a link for that login to the same
-- confirmation page (url), or why not (problem).  Recorded either way.
CREATE FUNCTION airlock.web_chat_link(service text, chat_user text, token text,
	OUT login text, OUT url text, OUT problem text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	who text;
	xid bigint;
	xdec text;
	t text;
BEGIN
	SELECT m.login INTO who FROM airlock.chat_identities m
	WHERE m.service = web_chat_link.service AND m.chat_user = web_chat_link.chat_user;
	IF who IS NULL THEN
		problem := format('your %s user %s is not mapped to an airlock operator; an administrator maps it with: airlock chat map %s %s LOGIN',
			service, chat_user, service, chat_user);
	ELSIF airlock._approver_problem(who) IS NOT NULL THEN
		problem := format('your %s user maps to %s, who %s', service, who, airlock._approver_problem(who));
	ELSE
		SELECT c.link_execution, c.link_decision, c.problem INTO xid, xdec, problem
		FROM airlock._action_check(token, who, false) c;
		IF problem IS NULL THEN
			t := airlock._action_mint(xid, xdec, who, service, NULL, chat_user);
			url := airlock.console_url('/a/' || t);
			IF url IS NULL THEN
				problem := 'the console has not published its address (public_url), so there is no link to give';
			END IF;
		END IF;
	END IF;
	login := who;
	INSERT INTO airlock.web_history (kind, login, address, execution_id, detail)
	VALUES ('chat_action', left(coalesce(who, '-'), 200),
		left(web_chat_link.service || ':' || web_chat_link.chat_user, 100), xid,
		left(coalesce(xdec || ' button: ', 'button: ') || coalesce(problem, 'confirmation link given'), 2000));
END
$$;

-- ---------------------------------------------------------------- hard-to-read commands

CREATE TABLE airlock.gate_legibility (
	one          boolean PRIMARY KEY DEFAULT true CHECK (one),
	action       text NOT NULL CHECK (action IN ('confirm', 'quorum')),
	max_lines    integer NOT NULL CHECK (max_lines BETWEEN 1 AND 100000),
	max_bytes    integer NOT NULL CHECK (max_bytes BETWEEN 80 AND 1000000),
	gate_version bigint REFERENCES airlock.gate_policies (version)
);
COMMENT ON TABLE airlock.gate_legibility IS
	'What a hard-to-read command needs (gate.yaml hard_to_read), of the gate version in force.';
INSERT INTO airlock.gate_legibility (action, max_lines, max_bytes, gate_version)
VALUES ('confirm', 24, 2000, (SELECT max(version) FROM airlock.gate_policies));

-- Puts a gate policy's hard_to_read in force (the defaults when it has none).
CREATE FUNCTION airlock._gate_apply_legibility() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	h jsonb := '{"action": "confirm", "max_lines": 24, "max_bytes": 2000}'::jsonb
		|| coalesce(NEW.document -> 'hard_to_read', '{}');
BEGIN
	DELETE FROM airlock.gate_legibility;
	INSERT INTO airlock.gate_legibility (action, max_lines, max_bytes, gate_version)
	VALUES (h ->> 'action', (h ->> 'max_lines')::integer, (h ->> 'max_bytes')::integer, NEW.version);
	RETURN NULL;
EXCEPTION
	WHEN not_null_violation OR check_violation OR invalid_text_representation
	     OR numeric_value_out_of_range OR wrong_object_type THEN
		RAISE EXCEPTION 'gate policy: hard_to_read: %', SQLERRM USING ERRCODE = 'AL002';
END
$$;
CREATE TRIGGER gate_policies_legibility AFTER INSERT ON airlock.gate_policies
	FOR EACH ROW EXECUTE FUNCTION airlock._gate_apply_legibility();

-- The characters a person cannot read as they are: what the console and the
-- command line show as escapes (lib/visible.c's visible_escapes(): controls,
-- format and invisible characters, spaces other than U+0020, generic
-- combining marks, variation selectors, private use, non-characters), except
-- newline and tab, which a script is made of.  tests/sql/console.sql checks
-- the two agree on every code point.
CREATE FUNCTION airlock._hidden_class() RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT '[\u0001-\u0008\u000b-\u001f\u007f-\u00a0\u00ad\u0300-\u036f\u0600-\u0605\u061c\u06dd\u070f'
		'\u0890-\u0891\u08e2\u115f-\u1160\u1680\u17b4-\u17b5\u180b-\u180f\u1ab0-\u1aff\u1dc0-\u1dff'
		'\u2000-\u200f\u2028-\u202f\u205f-\u206f\u20d0-\u20ff\u2800\u3000\u3164\ue000-\uf8ff'
		'\ufdd0-\ufdef\ufe00-\ufe0f\ufe20-\ufe2f\ufeff\uffa0\ufff0-\ufffb\ufffe-\uffff'
		'\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a'
		'\U0001fffe-\U0001ffff\U0002fffe-\U0002ffff\U0003fffe-\U0003ffff\U0004fffe-\U0004ffff'
		'\U0005fffe-\U0005ffff\U0006fffe-\U0006ffff\U0007fffe-\U0007ffff\U0008fffe-\U0008ffff'
		'\U0009fffe-\U0009ffff\U000afffe-\U000affff\U000bfffe-\U000bffff\U000cfffe-\U000cffff'
		'\U000dfffe-\U000dffff\U000e0000-\U000e0fff\U000efffe-\U000effff\U000f0000-\U0010ffff]'
$$;

-- How readable a command is: its hidden characters (and how many of them
-- change the text's direction), lines and bytes, and whether that makes it
-- hard to read under the gate in force (why says how, NULL when it is not).
CREATE FUNCTION airlock.command_legibility(command text, OUT hidden integer, OUT bidi integer,
	OUT lines integer, OUT bytes integer, OUT hard boolean, OUT why text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	g airlock.gate_legibility;
	parts text[] := '{}';
BEGIN
	SELECT * INTO g FROM airlock.gate_legibility;
	hidden := (SELECT count(*) FROM regexp_matches(coalesce(command, ''), airlock._hidden_class(), 'g'));
	bidi := (SELECT count(*) FROM regexp_matches(coalesce(command, ''),
		'[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]', 'g'));
	lines := 1 + length(coalesce(command, '')) - length(replace(coalesce(command, ''), E'\n', ''));
	bytes := octet_length(coalesce(command, ''));
	IF hidden > 0 THEN
		parts := parts || format('%s hidden character%s%s', hidden, CASE WHEN hidden = 1 THEN '' ELSE 's' END,
			CASE WHEN bidi > 0 THEN format(' (%s direction-changing)', bidi) ELSE '' END);
	END IF;
	IF lines > coalesce(g.max_lines, 24) THEN
		parts := parts || format('%s lines (more than %s)', lines, coalesce(g.max_lines, 24));
	END IF;
	IF bytes > coalesce(g.max_bytes, 2000) THEN
		parts := parts || format('%s bytes (more than %s)', bytes, coalesce(g.max_bytes, 2000));
	END IF;
	hard := cardinality(parts) > 0;
	why := CASE WHEN hard THEN array_to_string(parts, ', ') END;
END
$$;

-- As in 0004, and a hard-to-read command needs one more approver when the
-- gate says quorum.
CREATE OR REPLACE FUNCTION airlock._hold_for_approval(exec_id bigint, cls text) RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	g record;
	need integer;
BEGIN
	SELECT * INTO e FROM airlock.executions WHERE id = exec_id;
	g := airlock._gate_for(e.target, e.requested_by, cls);
	need := g.approvals_required;
	IF (SELECT action FROM airlock.gate_legibility) = 'quorum'
	   AND (SELECT l.hard FROM airlock.command_legibility(e.command) l) THEN
		need := least(need + 1, 5);
	END IF;
	UPDATE airlock.executions SET state = 'pending_approval', claimed_by = NULL,
		approvals_required = need, expires_at = now() + g.ttl,
		gate_version = g.gate_version, approval_valid_until = NULL, approved_probe = NULL
	WHERE id = exec_id;
	PERFORM pg_advisory_unlock(exec_id);
	PERFORM pg_notify('airlock_pending', '');
END
$$;

-- As in 0004, and: under hard_to_read action confirm, a hard-to-read command
-- is approved only by an approver who confirms having read it (confirmed),
-- which its event records.
DROP FUNCTION airlock.approve(bigint, text);
CREATE FUNCTION airlock.approve(id bigint, reason text DEFAULT NULL, confirmed boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	g record;
	votes integer;
	leg record;
	noted jsonb := '{}';
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
	SELECT * INTO leg FROM airlock.command_legibility(e.command);
	IF leg.hard THEN
		IF (SELECT action FROM airlock.gate_legibility) = 'confirm' AND NOT coalesce(confirmed, false) THEN
			RAISE EXCEPTION 'execution %: its command is hard to read (%): approve it only once you have read all of it, and say so (airlock approve % --confirm-unreadable, or the box on its console page). Nothing was approved.',
				e.id, leg.why, e.id USING ERRCODE = 'AL021';
		END IF;
		noted := jsonb_build_object('hard_to_read', leg.why,
			'confirmed_read', coalesce(confirmed, false));
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
			'payload_hash', e.payload_hash, 'gate_version', g.gate_version) || noted);
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
		'probed', airlock._probe_snapshot(e.target)) || noted);
	PERFORM pg_notify('airlock_work', '');
	RETURN 'approved';
END
$$;

-- ---------------------------------------------------------------- notifications with links

ALTER TABLE airlock.notification_deliveries ADD COLUMN operator text;
COMMENT ON COLUMN airlock.notification_deliveries.operator IS
	'The operator the hook is for (its config''s operator), to whom its action links are bound.';

-- As in 0014, and each delivery remembers its hook's operator.
CREATE OR REPLACE FUNCTION airlock.notify_expand(hooks jsonb, lim integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ids bigint[];
BEGIN
	IF jsonb_typeof(hooks) IS DISTINCT FROM 'array' THEN
		RAISE EXCEPTION 'notify_expand: hooks must be a JSON array' USING ERRCODE = 'AL002';
	END IF;
	SELECT array_agg(id) INTO ids FROM (
		SELECT id FROM airlock.notifications WHERE expanded_at IS NULL
		ORDER BY id LIMIT greatest(lim, 1) FOR UPDATE SKIP LOCKED) s;
	IF ids IS NULL THEN
		RETURN 0;
	END IF;
	INSERT INTO airlock.notification_deliveries (notification_id, hook, url, operator)
	SELECT n.id, h->>'name', h->>'url', h->>'operator'
	FROM airlock.notifications n
	JOIN airlock.executions e ON e.id = n.execution_id
	CROSS JOIN jsonb_array_elements(hooks) h
	WHERE n.id = ANY (ids)
	  AND (h->>'operator' IS NULL OR h->>'operator' <> e.requested_by)
	  AND CASE WHEN coalesce((h->>'escalation')::boolean, false)
	           THEN n.event = 'escalation'
	           ELSE n.event <> 'escalation' AND (jsonb_typeof(h->'events') IS DISTINCT FROM 'array'
	                OR h->'events' ? n.event) END
	ON CONFLICT (notification_id, hook) DO NOTHING;
	UPDATE airlock.notifications SET expanded_at = clock_timestamp() WHERE id = ANY (ids);
	RETURN cardinality(ids);
END
$$;

-- As in 0028, with what the agent said the change is for (action), the
-- votes so far, and the links: the request page, while the request waits
-- for a decision an approve and a reject link bound to the hook's operator
-- (the same ones on every attempt of a delivery), and where a Mattermost
-- button calls the console back.  base_url is the daemon's
-- notifications.base_url, for when no console published its address.
DROP FUNCTION airlock.notify_due(text[], integer, integer);
CREATE FUNCTION airlock.notify_due(hooks text[], lim integer, lease_s integer, base_url text DEFAULT NULL)
RETURNS TABLE (delivery_id bigint, hook text, attempt integer, notification_id bigint,
               event text, event_at timestamptz, execution_id bigint, target text,
               command text, class text, reasons text, requested_by text, state text,
               rewind_status text, error text, exit_code integer, decided_by text,
               decision_reason text, pending_since timestamptz, expires_at timestamptz,
               output_hold text, action text, votes text, request_url text,
               approve_url text, reject_url text, mattermost_callback_url text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	RETURN QUERY
	WITH due AS (
		SELECT d.id FROM airlock.notification_deliveries d
		WHERE d.state = 'pending' AND d.next_attempt_at <= clock_timestamp()
		  AND d.hook = ANY (hooks)
		ORDER BY d.next_attempt_at, d.id LIMIT greatest(lim, 1) FOR UPDATE SKIP LOCKED
	), took AS (
		UPDATE airlock.notification_deliveries d
		SET attempts = d.attempts + 1,
		    next_attempt_at = clock_timestamp() + make_interval(secs => greatest(lease_s, 1))
		FROM due WHERE d.id = due.id
		RETURNING d.id, d.hook, d.attempts, d.notification_id, d.operator
	)
	SELECT t.id, t.hook, t.attempts, n.id, n.event, n.created_at, e.id, e.target, e.command,
	       e.class,
	       (SELECT string_agg(coalesce(r->>'rule', '') || ': ' || coalesce(r->>'words', '')
	                          || ' (' || coalesce(r->>'class', '') || ')', '; ')
	        FROM jsonb_array_elements(CASE jsonb_typeof(e.reasons) WHEN 'array' THEN e.reasons
	                                  ELSE '[]'::jsonb END) r
	        WHERE r ? 'rule'),
	       e.requested_by, e.state, e.rewind_status, e.error, e.exit_code,
	       a.approver, a.reason,
	       (SELECT max(p.created_at) FROM airlock.notifications p
	        WHERE p.execution_id = e.id AND p.event = 'pending_approval'),
	       e.expires_at,
	       CASE WHEN n.event = 'output_held' THEN airlock._hold_message(h) END,
	       e.action,
	       airlock._votes(e) || '/' || greatest(e.approvals_required, 1),
	       airlock.console_url(airlock.console_request_path(e.id), base_url),
	       lk.approve_url, lk.reject_url, airlock.console_url('/chat/mattermost', base_url)
	FROM took t
	JOIN airlock.notifications n ON n.id = t.notification_id
	JOIN airlock.executions e ON e.id = n.execution_id
	LEFT JOIN airlock.output_holds h ON h.execution_id = e.id
	LEFT JOIN LATERAL (SELECT ap.approver, ap.reason FROM airlock.approvals ap
	                   WHERE ap.execution_id = e.id ORDER BY ap.at DESC, ap.id DESC LIMIT 1) a
	       ON n.event IN ('approved', 'rejected')
	LEFT JOIN LATERAL (
		SELECT airlock.console_url('/a/' || airlock._action_mint(e.id, 'approve', t.operator,
		           'webhook:' || t.hook, t.id), base_url) AS approve_url,
		       airlock.console_url('/a/' || airlock._action_mint(e.id, 'reject', t.operator,
		           'webhook:' || t.hook, t.id), base_url) AS reject_url
		WHERE n.event IN ('pending_approval', 'reminder', 'escalation')
		  AND e.state = 'pending_approval') lk ON true
	ORDER BY t.id;
END
$$;

-- ---------------------------------------------------------------- what agents and the CLI read

-- As in 0028, with the request's page on the console (console_url).
CREATE OR REPLACE FUNCTION airlock._execution_json(e airlock.executions, with_output boolean) RETURNS jsonb
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
		'confinement', e.confinement,
		'exit_code', e.exit_code, 'signal', e.signal,
		'stdout', CASE WHEN with_output THEN airlock._output_text(e.stdout) END,
		'stderr', CASE WHEN with_output THEN airlock._output_text(e.stderr) END,
		'stdout_truncated', e.stdout_truncated, 'stderr_truncated', e.stderr_truncated,
		'duration_ms', e.duration_ms, 'error', e.error,
		'output_hold', airlock._hold_json(e.id),
		'console_url', airlock.console_url(airlock.console_request_path(e.id)),
		'next_step', airlock._next_step(e)))
$$;

-- As in 0028, and a request waiting for a decision names its page on the
-- console, for the agent to hand to its operator.
ALTER FUNCTION airlock._next_step(airlock.executions) RENAME TO _next_step_unlinked;
CREATE FUNCTION airlock._next_step(e airlock.executions) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT airlock._next_step_unlinked(e) || coalesce(CASE WHEN e.state = 'pending_approval' THEN
		' An operator can decide it on the console: '
		|| airlock.console_url(airlock.console_request_path(e.id)) || '.' END, '')
$$;

-- ---------------------------------------------------------------- the inventory says where

-- As in 0016, and: every refusal names the entity or relationship it is
-- about (DETAIL 'entities[N]' or 'relationships[N]', counted from 0 in the
-- document, which `airlock seed` turns into file:line:col); two guests of
-- the document with one VMID on one node are refused; a guest's node must
-- be a proxmox-host of the document or of the database.  Nothing is written
-- when anything is refused.
CREATE OR REPLACE FUNCTION airlock.seed_inventory(inventory jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	n integer := 0;
	m integer;
	e jsonb;
	r jsonb;
	i bigint;
	cur airlock.entities;
	other text;
	node_in text;
	dup record;
	msg text;
	state text;
	detail text;
	cname text;
BEGIN
	IF jsonb_typeof(coalesce(inventory -> 'entities', '[]')) <> 'array'
	   OR jsonb_typeof(coalesce(inventory -> 'relationships', '[]')) <> 'array' THEN
		RAISE EXCEPTION 'inventory: "entities" and "relationships" must be lists. Nothing was written.'
			USING ERRCODE = 'AL002';
	END IF;
	SELECT b.ord - 1 AS at, a.x ->> 'slug' AS first, b.x ->> 'slug' AS second, b.x ->> 'vmid' AS vmid,
	       b.x ->> 'node' AS node
	INTO dup
	FROM jsonb_array_elements(coalesce(inventory -> 'entities', '[]')) WITH ORDINALITY a(x, ord)
	JOIN jsonb_array_elements(coalesce(inventory -> 'entities', '[]')) WITH ORDINALITY b(x, ord)
	  ON a.ord < b.ord AND a.x ->> 'vmid' = b.x ->> 'vmid' AND a.x ->> 'node' = b.x ->> 'node'
	 AND a.x ->> 'type' IN ('vm', 'lxc') AND b.x ->> 'type' IN ('vm', 'lxc')
	ORDER BY b.ord, a.ord LIMIT 1;
	IF dup.second IS NOT NULL THEN
		RAISE EXCEPTION 'inventory: % and % both have vmid % on %: a node gives each guest its own VMID (VMs and containers alike). Nothing was written.',
			dup.first, dup.second, dup.vmid, dup.node
			USING ERRCODE = 'AL002', DETAIL = format('entities[%s].vmid', dup.at);
	END IF;
	FOR e, i IN SELECT x, ord - 1 FROM jsonb_array_elements(coalesce(inventory -> 'entities', '[]'))
		 WITH ORDINALITY AS t(x, ord) ORDER BY (x ->> 'type') <> 'proxmox-host', ord LOOP
		BEGIN
			SELECT * INTO cur FROM airlock.entities t WHERE t.slug = e ->> 'slug';
			IF NOT FOUND AND e ->> 'type' IN ('vm', 'lxc') THEN
				SELECT t.slug INTO other FROM airlock.entities t
				WHERE t.type = e ->> 'type' AND t.vmid = (e ->> 'vmid')::integer
				  AND t.discovered_at IS NOT NULL AND t.slug <> e ->> 'slug'
				ORDER BY t.id LIMIT 1;
				IF other IS NOT NULL THEN
					RAISE EXCEPTION 'inventory: % has vmid %, which discovery already recorded as %; name it % in the inventory. Nothing was written.',
						e ->> 'slug', e ->> 'vmid', other, other
						USING ERRCODE = 'AL002', DETAIL = format('entities[%s].slug', i);
				END IF;
			END IF;
			node_in := e ->> 'node';
			IF cur.discovered_at IS NOT NULL OR node_in IS NULL THEN
				node_in := coalesce(cur.node, node_in);
			END IF;
			IF node_in IS NULL AND e ->> 'type' IN ('vm', 'lxc') THEN
				RAISE EXCEPTION 'inventory: % has no node, and discovery has not listed it yet; give its node. Nothing was written.',
					e ->> 'slug' USING ERRCODE = 'AL002', DETAIL = format('entities[%s]', i);
			END IF;
			IF node_in IS NOT NULL AND NOT EXISTS (SELECT 1 FROM airlock.entities h
				WHERE h.slug = node_in AND h.type = 'proxmox-host') THEN
				RAISE EXCEPTION 'inventory: the node of % is %, which is no proxmox-host of this inventory or of the database; list the host under entities, or correct the node. Nothing was written.',
					e ->> 'slug', node_in USING ERRCODE = 'AL002', DETAIL = format('entities[%s].node', i);
			END IF;
			INSERT INTO airlock.entities AS t (slug, type, node, vmid, address, port, ssh_user,
				host_key_fingerprint, zerto_vm_identifier, attributes, pve_node)
			VALUES (e ->> 'slug', e ->> 'type', node_in, (e ->> 'vmid')::integer, e ->> 'address',
				(e ->> 'port')::integer, e ->> 'ssh_user', e ->> 'host_key_fingerprint',
				e ->> 'zerto_vm_identifier', coalesce(e -> 'attributes', '{}'), e ->> 'pve_node')
			ON CONFLICT (slug) DO UPDATE SET type = EXCLUDED.type, node = EXCLUDED.node,
				vmid = EXCLUDED.vmid, address = EXCLUDED.address, port = EXCLUDED.port,
				ssh_user = EXCLUDED.ssh_user, host_key_fingerprint = EXCLUDED.host_key_fingerprint,
				zerto_vm_identifier = EXCLUDED.zerto_vm_identifier, pve_node = EXCLUDED.pve_node,
				attributes = t.attributes || EXCLUDED.attributes, updated_at = now()
			WHERE (t.type, t.node, t.vmid, t.address, t.port, t.ssh_user, t.host_key_fingerprint,
			       t.zerto_vm_identifier, t.pve_node) IS DISTINCT FROM
			      (EXCLUDED.type, EXCLUDED.node, EXCLUDED.vmid, EXCLUDED.address, EXCLUDED.port,
			       EXCLUDED.ssh_user, EXCLUDED.host_key_fingerprint, EXCLUDED.zerto_vm_identifier,
			       EXCLUDED.pve_node)
			   OR NOT (t.attributes @> EXCLUDED.attributes);
			GET DIAGNOSTICS m = ROW_COUNT;
			n := n + m;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, state = RETURNED_SQLSTATE,
				detail = PG_EXCEPTION_DETAIL, cname = CONSTRAINT_NAME;
			IF msg LIKE 'inventory:%' THEN
				RAISE EXCEPTION '%', msg USING ERRCODE = state,
					DETAIL = coalesce(nullif(detail, ''), format('entities[%s]', i));
			END IF;
			RAISE EXCEPTION 'inventory: % refused: %. Nothing was written.', coalesce(e ->> 'slug', 'an entity'),
				CASE cname
				WHEN 'slug_matches_type' THEN 'a slug is TYPE:NAME, NAME a letter or digit and then up to 62 letters, digits, ".", "_" or "-"'
				WHEN 'entities_vmid_check' THEN 'a vmid is 100..999999999'
				WHEN 'entities_port_check' THEN 'a port is 1..65535'
				ELSE msg END
				USING ERRCODE = CASE WHEN state LIKE '23%' OR state LIKE '22%' THEN 'AL002' ELSE state END,
				DETAIL = format('entities[%s]%s', i, CASE cname WHEN 'slug_matches_type' THEN '.slug'
					WHEN 'entities_vmid_check' THEN '.vmid' WHEN 'entities_port_check' THEN '.port' ELSE '' END);
		END;
	END LOOP;
	FOR r, i IN SELECT x, ord - 1 FROM jsonb_array_elements(coalesce(inventory -> 'relationships', '[]'))
		 WITH ORDINALITY AS t(x, ord) LOOP
		BEGIN
			FOR other IN SELECT s FROM unnest(ARRAY[r ->> 'source', r ->> 'target']) s LOOP
				IF other IS NULL OR NOT EXISTS (SELECT 1 FROM airlock.entities x WHERE x.slug = other) THEN
					RAISE EXCEPTION 'inventory: the relationship % % % names %, which is no entity of this inventory or of the database. Nothing was written.',
						r ->> 'source', r ->> 'type', r ->> 'target', coalesce(other, 'nothing')
						USING ERRCODE = 'AL001', DETAIL = format('relationships[%s].%s', i,
							CASE WHEN other IS NOT DISTINCT FROM r ->> 'source' THEN 'source' ELSE 'target' END);
				END IF;
			END LOOP;
			INSERT INTO airlock.relationships (source, target, type, created_by)
			VALUES (r ->> 'source', r ->> 'target', r ->> 'type', session_user)
			ON CONFLICT DO NOTHING;
			GET DIAGNOSTICS m = ROW_COUNT;
			n := n + m;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, state = RETURNED_SQLSTATE,
				detail = PG_EXCEPTION_DETAIL, cname = CONSTRAINT_NAME;
			IF msg LIKE 'inventory:%' THEN
				RAISE EXCEPTION '%', msg USING ERRCODE = state,
					DETAIL = coalesce(nullif(detail, ''), format('relationships[%s]', i));
			END IF;
			RAISE EXCEPTION 'inventory: the relationship % % % refused: %. Nothing was written.',
				r ->> 'source', r ->> 'type', r ->> 'target',
				CASE WHEN cname = 'relationships_type_check'
				     THEN 'a type is lowercase words joined by dashes, such as depends-on' ELSE msg END
				USING ERRCODE = CASE WHEN state LIKE '23%' OR state LIKE '22%' THEN 'AL002' ELSE state END,
				DETAIL = format('relationships[%s]%s', i,
					CASE WHEN cname = 'relationships_type_check' THEN '.type' ELSE '' END);
		END;
	END LOOP;
	RETURN n;
END
$$;

SELECT airlock._secure_new_objects();

GRANT SELECT ON airlock.console_location, airlock.gate_legibility TO airlock_operator, airlock_worker;
GRANT SELECT (execution_id, decision, operator, payload_hash, expires_at, sent_via, chat_user,
	created_at, used_at, used_by, outcome) ON airlock.action_links TO airlock_operator;
GRANT SELECT ON airlock.chat_identities, airlock.chat_identity_log TO airlock_operator;
REVOKE ALL ON airlock.action_key FROM PUBLIC, airlock_operator, airlock_agent, airlock_worker,
	airlock_scheduler, airlock_web;
GRANT EXECUTE ON FUNCTION airlock.web_publish_url(text), airlock.web_chat_link(text, text, text)
TO airlock_web;
GRANT EXECUTE ON FUNCTION airlock.console_url(text, text), airlock.console_request_path(bigint)
TO airlock_operator, airlock_agent, airlock_worker, airlock_web;
GRANT EXECUTE ON FUNCTION
	airlock.approve(bigint, text, boolean),
	airlock.action_link(text),
	airlock.action_link_use(text, text, boolean),
	airlock.command_legibility(text),
	airlock.chat_map(text, text, text),
	airlock.chat_unmap(text, text)
TO airlock_operator;
GRANT EXECUTE ON FUNCTION airlock.notify_due(text[], integer, integer, text) TO airlock_worker;
