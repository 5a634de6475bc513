-- 0005_audit.sql -- the audit trail covers decisions and outcomes, and its
-- rules cannot be switched off by the schema's owner.
--
-- 1. Records.  Every approvals row (on insert and on every change) and every
--    executions row (on insert, and whenever its state or a column that says
--    what was asked, decided or what happened changes) gets a chained event with
--    from_state = to_state = 'record' whose detail holds that row's content:
--    {"record": "approval", "approval": {...}} or
--    {"record": "execution", "execution": {...}} (large values as SHA-256).
--    audit_verify() then checks every row against its latest record, so a
--    row edited around the functions no longer agrees with the chain, and
--    hiding that means rewriting the chain (which signed anchors outside the
--    database reveal: airlock audit verify --anchors).
-- 2. The owner cannot switch the rules off.  An event trigger (created only
--    when a superuser applies this migration) refuses every schema change
--    to the airlock schemas by anyone but a superuser: disabling or dropping
--    the append-only triggers, replacing their functions, altering tables.
--    airlock_owner owns the tables, so PostgreSQL alone would let it.
--    From here on, migrations must be applied by a superuser.

-- ---------------------------------------------------------------- records

-- What an execution's record holds.  Timestamps are left out on purpose:
-- their JSON text depends on the session's TimeZone.
CREATE FUNCTION airlock._execution_record(e airlock.executions) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_build_object(
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
$$;

-- What an approval's record holds: the decision, by whom, for which payload.
CREATE FUNCTION airlock._approval_record(a airlock.approvals) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT jsonb_build_object('id', a.id, 'execution_id', a.execution_id, 'approver', a.approver,
		'decision', a.decision, 'reason', a.reason, 'payload_hash', a.payload_hash,
		'rewind_status', a.rewind_status,
		'at', to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
$$;

CREATE FUNCTION airlock._record_execution() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM airlock._event(NEW.id, 'record', 'record',
		jsonb_build_object('record', 'execution', 'execution', airlock._execution_record(NEW)));
	RETURN NULL;
END
$$;

CREATE FUNCTION airlock._record_approval() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM airlock._event(NEW.execution_id, 'record', 'record',
		jsonb_build_object('record', 'approval', 'approval', airlock._approval_record(NEW)));
	RETURN NULL;
END
$$;

CREATE TRIGGER executions_record_insert AFTER INSERT ON airlock.executions
	FOR EACH ROW EXECUTE FUNCTION airlock._record_execution();
-- Claims and leases alone do not.
CREATE TRIGGER executions_record_update AFTER UPDATE ON airlock.executions
	FOR EACH ROW WHEN ((OLD.state, OLD.target, OLD.target_type, OLD.requested_by, OLD.command,
		OLD.declared_risk, OLD.change_id, OLD.action, OLD.class, OLD.reasons, OLD.policy_version,
		OLD.payload_hash, OLD.approvals_required, OLD.rewind_status, OLD.rewind_possible,
		OLD.rewind_points, OLD.exit_code, OLD.signal, OLD.stdout, OLD.stderr,
		OLD.stdout_truncated, OLD.stderr_truncated, OLD.duration_ms, OLD.error)
		IS DISTINCT FROM (NEW.state, NEW.target, NEW.target_type, NEW.requested_by, NEW.command,
		NEW.declared_risk, NEW.change_id, NEW.action, NEW.class, NEW.reasons, NEW.policy_version,
		NEW.payload_hash, NEW.approvals_required, NEW.rewind_status, NEW.rewind_possible,
		NEW.rewind_points, NEW.exit_code, NEW.signal, NEW.stdout, NEW.stderr,
		NEW.stdout_truncated, NEW.stderr_truncated, NEW.duration_ms, NEW.error))
	EXECUTE FUNCTION airlock._record_execution();
CREATE TRIGGER approvals_record AFTER INSERT OR UPDATE ON airlock.approvals
	FOR EACH ROW EXECUTE FUNCTION airlock._record_approval();

-- Rows from before this migration get their first record now.
SELECT airlock._event(e.id, 'record', 'record',
	jsonb_build_object('record', 'execution', 'execution', airlock._execution_record(e)))
FROM airlock.executions e ORDER BY e.id;
SELECT airlock._event(a.execution_id, 'record', 'record',
	jsonb_build_object('record', 'approval', 'approval', airlock._approval_record(a), 'backfill', true))
FROM airlock.approvals a ORDER BY a.id;

-- Rows that disagree with their latest record, records whose row is gone,
-- rows with no record, and approvals whose latest record was not written by
-- the approver's own session (approve() and reject() always are; an edit by
-- anyone else is not).  event_id is the record concerned, 0 when there is
-- none.  Records the migration wrote for older rows are marked backfill.
CREATE FUNCTION airlock._audit_records(OUT event_id bigint, OUT problem text)
RETURNS SETOF record LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	WITH arec AS (
		SELECT DISTINCT ON ((ev.detail -> 'approval' ->> 'id')::bigint)
		       (ev.detail -> 'approval' ->> 'id')::bigint AS approval_id, ev.id, ev.detail -> 'approval' AS r,
		       ev.actor, coalesce((ev.detail ->> 'backfill')::boolean, false) AS backfill
		FROM airlock.execution_events ev
		WHERE ev.from_state = 'record' AND ev.detail ->> 'record' = 'approval'
		ORDER BY (ev.detail -> 'approval' ->> 'id')::bigint, ev.id DESC),
	erec AS (
		SELECT DISTINCT ON (ev.execution_id) ev.execution_id, ev.id, ev.detail -> 'execution' AS r
		FROM airlock.execution_events ev
		WHERE ev.from_state = 'record' AND ev.detail ->> 'record' = 'execution'
		ORDER BY ev.execution_id, ev.id DESC)
	SELECT * FROM (
		SELECT coalesce(arec.id, 0),
		       CASE WHEN arec.id IS NULL THEN format(
				'approval %s of execution %s (%s by %s) has no chained record: it was written around the triggers',
				a.id, a.execution_id, a.decision, a.approver)
			WHEN a.id IS NULL THEN format(
				'event %s records approval %s of execution %s (%s by %s), and that approval is gone',
				arec.id, arec.approval_id, arec.r ->> 'execution_id', arec.r ->> 'decision', arec.r ->> 'approver')
			WHEN airlock._approval_record(a) <> arec.r THEN format(
				'approval %s of execution %s differs from its record (event %s): the row says %s, the record says %s',
				a.id, a.execution_id, arec.id, airlock._approval_record(a), arec.r)
			ELSE format('approval %s of execution %s says %s decided, but its record (event %s) was written by %s',
				a.id, a.execution_id, a.approver, arec.id, arec.actor) END
		FROM airlock.approvals a FULL JOIN arec ON arec.approval_id = a.id
		WHERE arec.id IS NULL OR a.id IS NULL OR airlock._approval_record(a) <> arec.r
		   OR (arec.actor <> a.approver AND NOT arec.backfill)
		UNION ALL
		SELECT coalesce(erec.id, 0),
		       CASE WHEN erec.id IS NULL THEN format(
				'execution %s has no chained record: it was written around the triggers', e.id)
			ELSE format('execution %s differs from its record (event %s): the row says %s, the record says %s',
				e.id, erec.id, airlock._execution_record(e), erec.r) END
		FROM airlock.executions e LEFT JOIN erec ON erec.execution_id = e.id
		WHERE erec.id IS NULL OR airlock._execution_record(e) <> erec.r) p
	ORDER BY 1
$$;

-- Walks the hash chain, then checks the rows against their records.
-- first_broken is NULL when everything holds; 0 when the problem is a row
-- with no record at all.
CREATE OR REPLACE FUNCTION airlock.audit_verify(OUT checked bigint, OUT first_broken bigint, OUT detail text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ev airlock.execution_events;
	prev text := repeat('0', 64);
	bad record;
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
	SELECT * INTO bad FROM airlock._audit_records() LIMIT 1;
	IF FOUND THEN
		first_broken := bad.event_id;
		detail := bad.problem;
	END IF;
END
$$;

-- ---------------------------------------------------------------- no schema changes but by a superuser

CREATE SCHEMA IF NOT EXISTS airlock_guard;
REVOKE ALL ON SCHEMA airlock_guard FROM PUBLIC;

-- Raises unless the current user is a superuser, for any command that
-- created, altered or dropped an object in the airlock schemas (or the
-- schemas themselves).  Lives outside the airlock schema and is owned by the
-- superuser who applied this migration, so airlock_owner cannot replace it.
CREATE OR REPLACE FUNCTION airlock_guard.refuse_ddl() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	obj record;
BEGIN
	IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		RETURN;
	END IF;
	IF TG_EVENT = 'sql_drop' THEN
		FOR obj IN SELECT * FROM pg_event_trigger_dropped_objects() LOOP
			IF obj.schema_name IN ('airlock', 'airlock_guard')
			   OR (obj.object_type = 'schema' AND obj.object_identity IN ('airlock', 'airlock_guard')) THEN
				RAISE EXCEPTION 'airlock: % may not drop % (%): the airlock schema changes only when a superuser applies a migration',
					current_user, obj.object_identity, obj.object_type USING ERRCODE = '42501';
			END IF;
		END LOOP;
		RETURN;
	END IF;
	FOR obj IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
		IF obj.schema_name IN ('airlock', 'airlock_guard')
		   OR (obj.object_type = 'schema' AND obj.object_identity IN ('airlock', 'airlock_guard')) THEN
			RAISE EXCEPTION 'airlock: % may not run % on % (%): the airlock schema changes only when a superuser applies a migration; its append-only rules hold for its owner too',
				current_user, obj.command_tag, obj.object_identity, obj.object_type USING ERRCODE = '42501';
		END IF;
	END LOOP;
END
$$;
REVOKE ALL ON FUNCTION airlock_guard.refuse_ddl() FROM PUBLIC;

DO $$
BEGIN
	IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		RAISE WARNING 'airlock: 0005_audit was applied by %, not a superuser: the event trigger that stops airlock_owner from disabling the append-only triggers was NOT created (apply as a superuser to have it)', current_user;
		RETURN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'airlock_refuse_ddl') THEN
		CREATE EVENT TRIGGER airlock_refuse_ddl ON ddl_command_end
			EXECUTE FUNCTION airlock_guard.refuse_ddl();
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'airlock_refuse_drop') THEN
		CREATE EVENT TRIGGER airlock_refuse_drop ON sql_drop
			EXECUTE FUNCTION airlock_guard.refuse_ddl();
	END IF;
END
$$;

SELECT airlock._secure_new_objects();
