-- 0020_probe.sql -- the probes take turns with the commands airlock runs, and
-- a request on a gone guest is told that first.
--
-- A guest agent serves one client at a time.  The scheduler's batched agent
-- probe leaves out every VM airlock is running a command or a recovery on
-- right now, whichever daemon runs it: probe_busy_guests() names them to the
-- scheduler, which may not read the executions themselves.
--
-- The pre-flight of run() (and of a claim after an approval) names the
-- first reason a request can never run.  A guest discovery marked gone is
-- that reason before anything about its agent or container: a VM never
-- probed (so with no qemu_guest_agent attribute) was refused with "guest
-- agent is not running", which sends the agent to the wrong fix.

-- The guests (VMs) with an execution in state running: a command, a
-- recovery's file writes, each through the guest agent.
CREATE FUNCTION airlock.probe_busy_guests() RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT DISTINCT x.target FROM airlock.executions x
	WHERE x.state = 'running' AND x.target_type = 'vm'
$$;

-- Why a request on a gone guest is refused, in the words the refusal of its
-- row uses.
CREATE FUNCTION airlock._gone_message(ent airlock.entities) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT format('run on %s refused: the guest is gone: no node airlock manages lists it (vmid %s'
		' was last on %s, missing since %s). It was removed, or moved to a node the inventory does'
		' not list. Use a target that exists, or add the guest (or its node) back and wait for'
		' discovery.', ent.slug, ent.vmid, ent.node,
		to_char(ent.gone_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
$$;

CREATE OR REPLACE FUNCTION airlock._preflight_problem(ent airlock.entities, OUT sqlstate text,
	OUT message text)
LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN ent.gone_at IS NOT NULL THEN 'AL016'
		    WHEN ent.type = 'vm' AND coalesce(ent.attributes ->> 'qemu_guest_agent', '') <> 'running'
		    THEN 'AL003'
		    WHEN ent.type = 'lxc' AND ent.attributes ->> 'container_status' = 'stopped' THEN 'AL004' END,
	       CASE WHEN ent.gone_at IS NOT NULL THEN airlock._gone_message(ent)
		    WHEN ent.type = 'vm' AND coalesce(ent.attributes ->> 'qemu_guest_agent', '') <> 'running'
		    THEN format('run on %s blocked: QEMU guest agent is not running (qm guest exec unavailable). Start the agent first or use a different target.', ent.slug)
		    WHEN ent.type = 'lxc' AND ent.attributes ->> 'container_status' = 'stopped'
		    THEN format('run on %s blocked: container is not running (pct exec unavailable). Start the container first or use a different target.', ent.slug) END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION airlock.probe_busy_guests() TO airlock_scheduler;
