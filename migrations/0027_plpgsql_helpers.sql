-- 0027_plpgsql_helpers.sql -- the request path's small checks, as PL/pgSQL.
--
-- run() asks three small helpers on every call: whether the flood limits
-- apply to the caller, what they are, and whether the target can run a
-- command at all.  They were written in SQL, and PostgreSQL cannot inline a
-- SQL function that holds a sub-select or returns a row: called from
-- PL/pgSQL, such a function is parsed and planned again in every
-- transaction, which was a third of what run() itself cost.  A PL/pgSQL
-- function keeps its plans for the session.  What each one answers is
-- unchanged.

CREATE OR REPLACE FUNCTION airlock._limits_apply() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN NOT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = session_user),
	                    false);
END
$$;

-- The gate's limits: its one row, or the defaults when there is none.
CREATE OR REPLACE FUNCTION airlock._limits() RETURNS airlock.gate_limits
LANGUAGE plpgsql STABLE AS $$
DECLARE
	lim airlock.gate_limits;
BEGIN
	SELECT l.* INTO lim FROM airlock.gate_limits l LIMIT 1;
	IF NOT FOUND THEN
		lim := ROW(true, 60, 100, 65536, 256, 256, NULL)::airlock.gate_limits;
	END IF;
	RETURN lim;
END
$$;

-- Why a request for `ent` can never run now: the SQLSTATE and the message
-- run() raises, both NULL when nothing stands in the way.
CREATE OR REPLACE FUNCTION airlock._preflight_problem(ent airlock.entities, OUT sqlstate text,
	OUT message text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
	IF ent.gone_at IS NOT NULL THEN
		sqlstate := 'AL016';
		message := airlock._gone_message(ent);
	ELSIF ent.type = 'vm' AND coalesce(ent.attributes ->> 'qemu_guest_agent', '') <> 'running' THEN
		sqlstate := 'AL003';
		message := format('run on %s blocked: QEMU guest agent is not running (qm guest exec unavailable). Start the agent first or use a different target.', ent.slug);
	ELSIF ent.type = 'lxc' AND ent.attributes ->> 'container_status' = 'stopped' THEN
		sqlstate := 'AL004';
		message := format('run on %s blocked: container is not running (pct exec unavailable). Start the container first or use a different target.', ent.slug);
	END IF;
END
$$;

SELECT airlock._secure_new_objects();
