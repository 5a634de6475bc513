-- 0014_notify_preview.sql -- notifications an operator can act on, and
-- previews of what a held command would do.
--
-- Notifications: every decision point and outcome of a request is written to
-- an outbox by the database itself, in the transaction that changes the
-- row's state (a trigger), so no state change is ever announced that did not
-- commit, and none that committed is forgotten when a daemon dies.  airlockd
-- expands each outbox row into one delivery per configured webhook and
-- delivers it with retries and exponential backoff; the delivery state is a
-- view operators read.
--
-- Previews: a policy rule may name read-only commands that show what a held
-- mutating command would do (`apt-get -s install X` for `apt-get install X`).
-- airlockd runs them, when the request is held, only if they classify
-- read_only, in the read-only jail, and stores their output here for the
-- approver.  Agents do not read previews: they are the approver's material.

-- ---------------------------------------------------------------- outbox

CREATE TABLE airlock.notifications (
	id           bigserial PRIMARY KEY,
	execution_id bigint NOT NULL REFERENCES airlock.executions (id),
	event        text NOT NULL CHECK (event IN (
	                 'pending_approval', 'approved', 'rejected', 'expired', 'cancelled',
	                 'refused', 'succeeded', 'failed', 'timed_out', 'outcome_unknown',
	                 'reminder', 'escalation')),
	created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	expanded_at  timestamptz
);
CREATE INDEX notifications_unexpanded ON airlock.notifications (id) WHERE expanded_at IS NULL;
CREATE INDEX notifications_execution ON airlock.notifications (execution_id, event);

CREATE TABLE airlock.notification_deliveries (
	id              bigserial PRIMARY KEY,
	notification_id bigint NOT NULL REFERENCES airlock.notifications (id),
	hook            text NOT NULL,
	url             text NOT NULL, -- as the log may show it: no credentials, path or query
	state           text NOT NULL DEFAULT 'pending'
	                    CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts        integer NOT NULL DEFAULT 0,
	next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	last_status     integer,
	last_error      text,
	created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
	delivered_at    timestamptz,
	UNIQUE (notification_id, hook)
);
CREATE INDEX notification_deliveries_due ON airlock.notification_deliveries (next_attempt_at)
	WHERE state = 'pending';

-- Which state changes are announced: the decisions, and the outcomes of
-- changes.  The results of observations (read_only rows nobody had to
-- approve) are routine and not announced; their refusals and lost outcomes
-- are.
CREATE FUNCTION airlock._notify_state() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF NEW.state IN ('pending_approval', 'approved', 'rejected', 'expired', 'refused',
	                 'outcome_unknown')
	   OR (NEW.state IN ('succeeded', 'failed', 'timed_out', 'cancelled')
	       AND (NEW.class IS DISTINCT FROM 'read_only' OR NEW.approvals_required > 0
	            OR NEW.decided_at IS NOT NULL)) THEN
		INSERT INTO airlock.notifications (execution_id, event) VALUES (NEW.id, NEW.state);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER executions_notify AFTER UPDATE OF state ON airlock.executions
	FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
	EXECUTE FUNCTION airlock._notify_state();

-- Expands up to lim outbox rows into deliveries, one per hook that wants the
-- event.  hooks: [{"name", "url", "operator", "events": [..] or null,
-- "escalation": bool}]: a hook naming an operator is skipped for that
-- operator's own requests; an escalation hook gets only escalations; a hook
-- with events gets only those.  Returns the number of outbox rows expanded.
CREATE FUNCTION airlock.notify_expand(hooks jsonb, lim integer) RETURNS integer
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
	INSERT INTO airlock.notification_deliveries (notification_id, hook, url)
	SELECT n.id, h->>'name', h->>'url'
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

-- Takes up to lim deliveries to the named hooks that are due, for `lease_s`
-- seconds (another daemon does not take them meanwhile), and returns what a
-- message needs.
CREATE FUNCTION airlock.notify_due(hooks text[], lim integer, lease_s integer)
RETURNS TABLE (delivery_id bigint, hook text, attempt integer, notification_id bigint,
               event text, event_at timestamptz, execution_id bigint, target text,
               command text, class text, reasons text, requested_by text, state text,
               rewind_status text, error text, exit_code integer, decided_by text,
               decision_reason text, pending_since timestamptz, expires_at timestamptz)
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
		RETURNING d.id, d.hook, d.attempts, d.notification_id
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
	       e.expires_at
	FROM took t
	JOIN airlock.notifications n ON n.id = t.notification_id
	JOIN airlock.executions e ON e.id = n.execution_id
	LEFT JOIN LATERAL (SELECT ap.approver, ap.reason FROM airlock.approvals ap
	                   WHERE ap.execution_id = e.id ORDER BY ap.at DESC, ap.id DESC LIMIT 1) a
	       ON n.event IN ('approved', 'rejected')
	ORDER BY t.id;
END
$$;

-- Records one attempt: delivered, or failed with retry_ms until the next
-- attempt (NULL: no more attempts, the delivery has failed for good).
CREATE FUNCTION airlock.notify_result(delivery bigint, ok boolean, status integer, err text,
                                      retry_ms integer)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	UPDATE airlock.notification_deliveries d
	SET state = CASE WHEN ok THEN 'delivered' WHEN retry_ms IS NULL THEN 'failed' ELSE 'pending' END,
	    last_status = status,
	    last_error = CASE WHEN ok THEN NULL ELSE left(err, 1000) END,
	    delivered_at = CASE WHEN ok THEN clock_timestamp() END,
	    next_attempt_at = CASE WHEN ok OR retry_ms IS NULL THEN d.next_attempt_at
	                      ELSE clock_timestamp() + make_interval(secs => retry_ms / 1000.0) END
	WHERE d.id = delivery AND d.state = 'pending';
END
$$;

-- Reminders and escalations for requests still waiting: one reminder once a
-- request has waited remind_after, one escalation once it has waited
-- escalate_after (NULL: off), counted from the latest time it started to
-- wait.  Returns how many were queued.
CREATE FUNCTION airlock.notify_reminders(remind_after interval, escalate_after interval)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	n integer := 0;
	k integer;
BEGIN
	-- One daemon at a time, so two do not both remind.
	IF NOT pg_try_advisory_xact_lock(74287736, 0) THEN
		RETURN 0;
	END IF;
	WITH waiting AS (
		SELECT e.id, coalesce((SELECT max(p.created_at) FROM airlock.notifications p
		                       WHERE p.execution_id = e.id AND p.event = 'pending_approval'),
		                      e.classified_at, e.created_at) AS since
		FROM airlock.executions e WHERE e.state = 'pending_approval'
	), kinds AS (
		SELECT w.id, w.since, 'reminder' AS event, remind_after AS after FROM waiting w
		WHERE remind_after IS NOT NULL
		UNION ALL
		SELECT w.id, w.since, 'escalation', escalate_after FROM waiting w
		WHERE escalate_after IS NOT NULL
	), ins AS (
		INSERT INTO airlock.notifications (execution_id, event)
		SELECT k2.id, k2.event FROM kinds k2
		WHERE clock_timestamp() - k2.since >= k2.after
		  AND NOT EXISTS (SELECT 1 FROM airlock.notifications x
		                  WHERE x.execution_id = k2.id AND x.event = k2.event
		                    AND x.created_at >= k2.since)
		RETURNING 1
	)
	SELECT count(*) INTO k FROM ins;
	n := n + k;
	RETURN n;
END
$$;

-- What operators read: each delivery with its notification and request.
CREATE VIEW airlock.notification_status AS
	SELECT d.id, n.execution_id, n.event, d.hook, d.url, d.state, d.attempts, d.last_status,
	       d.last_error, n.created_at, d.next_attempt_at, d.delivered_at
	FROM airlock.notification_deliveries d
	JOIN airlock.notifications n ON n.id = d.notification_id;

-- ---------------------------------------------------------------- previews

CREATE TABLE airlock.execution_previews (
	execution_id bigint NOT NULL REFERENCES airlock.executions (id),
	ord          integer NOT NULL CHECK (ord >= 1),
	command      text NOT NULL,
	exit_code    integer,
	stdout       text,
	stderr       text,
	truncated    boolean NOT NULL DEFAULT false,
	error        text,
	created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (execution_id, ord)
);

-- Records one preview's outcome (error set: it did not run, or did not finish),
-- and an event in the request's history.  A preview recorded again (the
-- request was held again) replaces the earlier one; the history keeps both.
CREATE FUNCTION airlock.worker_preview(exec_id bigint, p_ord integer, p_command text,
                                       p_exit_code integer, p_stdout text, p_stderr text,
                                       p_truncated boolean, p_error text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	st text;
BEGIN
	SELECT state INTO st FROM airlock.executions WHERE id = exec_id;
	IF st IS NULL THEN
		RAISE EXCEPTION 'worker_preview: no execution %', exec_id USING ERRCODE = 'AL001';
	END IF;
	IF p_ord IS NULL OR p_ord < 1 OR p_ord > 16 THEN
		RAISE EXCEPTION 'worker_preview: ord must be 1..16' USING ERRCODE = 'AL002';
	END IF;
	INSERT INTO airlock.execution_previews AS p
		(execution_id, ord, command, exit_code, stdout, stderr, truncated, error)
	VALUES (exec_id, p_ord, p_command, p_exit_code, p_stdout, p_stderr,
	        coalesce(p_truncated, false), p_error)
	ON CONFLICT ON CONSTRAINT execution_previews_pkey DO UPDATE
	SET command = EXCLUDED.command, exit_code = EXCLUDED.exit_code, stdout = EXCLUDED.stdout,
	    stderr = EXCLUDED.stderr, truncated = EXCLUDED.truncated, error = EXCLUDED.error,
	    created_at = clock_timestamp();
	-- The history says a preview ran, and its chained event carries the
	-- output's digests, so an edited preview is detectable.
	PERFORM airlock._event(exec_id, st, st, jsonb_build_object(
		'step', 'preview', 'ord', p_ord, 'command', p_command, 'exit_code', p_exit_code,
		'error', p_error, 'truncated', coalesce(p_truncated, false),
		'stdout_sha256', encode(sha256(convert_to(coalesce(p_stdout, ''), 'UTF8')), 'hex'),
		'stderr_sha256', encode(sha256(convert_to(coalesce(p_stderr, ''), 'UTF8')), 'hex')));
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION
	airlock.notify_expand(jsonb, integer),
	airlock.notify_due(text[], integer, integer),
	airlock.notify_result(bigint, boolean, integer, text, integer),
	airlock.notify_reminders(interval, interval),
	airlock.worker_preview(bigint, integer, text, integer, text, text, boolean, text)
TO airlock_worker;
GRANT SELECT ON airlock.notifications, airlock.notification_deliveries,
	airlock.notification_status, airlock.execution_previews
TO airlock_operator, airlock_worker;
