-- probes.sql -- a probe round's records in one statement (migration 0025,
-- airlock.record_probes), with pgTAP: record_probe()'s rules for every
-- entry, nothing written when any entry is malformed, unknown entities
-- skipped and named, and only the scheduler may call it.
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory('{"entities": [
	{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1", "port": 2222,
	 "ssh_user": "root"},
	{"slug": "vm:a", "type": "vm", "node": "proxmox-host:hubris", "vmid": 101},
	{"slug": "vm:b", "type": "vm", "node": "proxmox-host:hubris", "vmid": 102},
	{"slug": "lxc:c", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 200}]}');
CREATE ROLE p_sched LOGIN IN ROLE airlock_scheduler;
CREATE ROLE p_agent LOGIN IN ROLE airlock_agent;

-- What an entity looks like: its attributes and its checks.
CREATE FUNCTION pg_temp.state(s text) RETURNS text LANGUAGE sql AS $$
	SELECT (SELECT attributes::text FROM airlock.entities WHERE slug = s) || ' ' ||
	       coalesce((SELECT string_agg(name || '=' || status || ':' || coalesce(detail, ''), ',' ORDER BY name)
			 FROM airlock.checks WHERE entity = s), '')
$$;
CREATE FUNCTION pg_temp.all_state() RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(slug || ' ' || pg_temp.state(slug), E'\n' ORDER BY slug) FROM airlock.entities
$$;

SET SESSION AUTHORIZATION p_sched;
SELECT is(airlock.record_probes('[
	{"slug": "vm:a", "attributes": {"qemu_guest_agent": "running", "health": "healthy"},
	 "checks": [{"name": "guest-agent", "status": "ok", "detail": "answers"}]},
	{"slug": "vm:b", "attributes": {"qemu_guest_agent": "not_running", "health": "unhealthy"},
	 "checks": [{"name": "guest-agent", "status": "failing", "detail": "silent"}]},
	{"slug": "lxc:c", "attributes": {"container_status": "stopped", "health": "unhealthy"}}]'),
	'{}'::text[], 'the scheduler records three entities at once');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.state('vm:a'), '{"health": "healthy", "qemu_guest_agent": "running"} guest-agent=ok:answers',
	'the first one''s attributes and check');
SELECT is(pg_temp.state('vm:b'), '{"health": "unhealthy", "qemu_guest_agent": "not_running"} guest-agent=failing:silent',
	'the second one''s');
SELECT is(pg_temp.state('lxc:c'), '{"health": "unhealthy", "container_status": "stopped"} ',
	'checks may be left out');

-- The same facts through record_probe, one call each, give the same state.
CREATE TEMP TABLE one_by_one AS SELECT pg_temp.all_state() AS s;
SET SESSION AUTHORIZATION p_sched;
SELECT airlock.record_probe('vm:a', '{"qemu_guest_agent": "exec_disabled", "health": "unhealthy"}',
	'[{"name": "guest-agent", "status": "failing", "detail": "exec off"}]');
SELECT airlock.record_probe('vm:b', '{"qemu_guest_agent": "running", "health": "healthy"}',
	'[{"name": "guest-agent", "status": "ok", "detail": "back"}, {"name": "confinement", "status": "ok", "detail": "full"}]');
RESET SESSION AUTHORIZATION;
UPDATE one_by_one SET s = pg_temp.all_state();
SET SESSION AUTHORIZATION p_sched;
SELECT airlock.record_probes('[
	{"slug": "vm:a", "attributes": {"qemu_guest_agent": "running", "health": "healthy"},
	 "checks": [{"name": "guest-agent", "status": "ok", "detail": "answers"}]},
	{"slug": "vm:b", "attributes": {"qemu_guest_agent": "not_running", "health": "unhealthy"},
	 "checks": [{"name": "guest-agent", "status": "failing", "detail": "silent"}]}]');
SELECT airlock.record_probes('[
	{"slug": "vm:a", "attributes": {"qemu_guest_agent": "exec_disabled", "health": "unhealthy"},
	 "checks": [{"name": "guest-agent", "status": "failing", "detail": "exec off"}]},
	{"slug": "vm:b", "attributes": {"qemu_guest_agent": "running", "health": "healthy"},
	 "checks": [{"name": "guest-agent", "status": "ok", "detail": "back"}, {"name": "confinement", "status": "ok", "detail": "full"}]}]');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.all_state(), (SELECT s FROM one_by_one), 'the same records through record_probes and record_probe leave the same state');

-- An entity gone from the inventory is skipped and named; the others are written.
SET SESSION AUTHORIZATION p_sched;
SELECT is(airlock.record_probes('[
	{"slug": "vm:gone", "attributes": {"health": "healthy"}},
	{"slug": "vm:a", "attributes": {"health": "healthy", "qemu_guest_agent": "running"},
	 "checks": [{"name": "guest-agent", "status": "ok", "detail": "again"}]},
	{"slug": "vm:also-gone", "attributes": {"health": "healthy"},
	 "checks": [{"name": "guest-agent", "status": "ok", "detail": "x"}]}]'),
	'{vm:gone,vm:also-gone}'::text[], 'unknown entities are named in the result, in order');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.state('vm:a'), '{"health": "healthy", "qemu_guest_agent": "running"} guest-agent=ok:again',
	'and the known one is written');
SELECT is((SELECT count(*) FROM airlock.checks WHERE entity LIKE '%gone'), 0::bigint, 'no check is written for them');

-- A check named twice for one entity: the last one stands.
SET SESSION AUTHORIZATION p_sched;
SELECT airlock.record_probes('[{"slug": "vm:a", "attributes": {}, "checks": [
	{"name": "guest-agent", "status": "ok", "detail": "first"},
	{"name": "guest-agent", "status": "failing", "detail": "last"}]}]');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT status || ':' || detail FROM airlock.checks WHERE entity = 'vm:a' AND name = 'guest-agent'),
	'failing:last', 'a check named twice: the last one is written');

-- Attributes already recorded leave the entity's updated_at alone.
UPDATE airlock.entities SET updated_at = '2001-01-01' WHERE slug = 'vm:a';
SET SESSION AUTHORIZATION p_sched;
SELECT airlock.record_probes('[{"slug": "vm:a", "attributes": {"health": "healthy"}}]');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT updated_at FROM airlock.entities WHERE slug = 'vm:a'), '2001-01-01'::timestamptz,
	'unchanged attributes do not touch updated_at');
SET SESSION AUTHORIZATION p_sched;
SELECT airlock.record_probes('[{"slug": "vm:a", "attributes": {"health": "unhealthy"}}]');
RESET SESSION AUTHORIZATION;
SELECT isnt((SELECT updated_at FROM airlock.entities WHERE slug = 'vm:a'), '2001-01-01'::timestamptz,
	'changed ones do');

-- Malformed input: a specific error, and nothing of the call is written
-- (the valid first entry included).
CREATE TEMP TABLE before AS SELECT pg_temp.all_state() AS s;
GRANT SELECT ON before TO p_sched;
SET SESSION AUTHORIZATION p_sched;
SELECT throws_ok($$ SELECT airlock.record_probes('{"slug": "vm:a"}') $$, 'AL002',
	'record_probes: probes must be a JSON array of {slug, attributes, checks}', 'not a list');
SELECT throws_ok($$ SELECT airlock.record_probes(NULL) $$, 'AL002', NULL, 'NULL');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, 7]') $$,
	'AL002', 'record_probes: entry 2 is not an object', 'an entry that is not an object');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"attributes": {}}]') $$,
	'AL002', 'record_probes: entry 2 has no slug (a string)', 'an entry without a slug');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": 5, "attributes": {}}]') $$,
	'AL002', 'record_probes: entry 2 has no slug (a string)', 'a slug that is not a string');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a", "attributes": ["health"]}]') $$,
	'AL002', 'record_probes: the attributes of "vm:a" must be a JSON object', 'attributes that are not an object');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a"}]') $$,
	'AL002', 'record_probes: the attributes of "vm:a" must be a JSON object', 'no attributes');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a", "attributes": {}, "checks": {}}]') $$,
	'AL002', 'record_probes: the checks of "vm:a" must be a JSON array', 'checks that are not a list');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a", "attributes": {"health": "healthy", "owner": "x"}}]') $$,
	'AL002', 'record_probes: "owner" is not a scheduler-owned key (entity "vm:a")', 'a key the scheduler does not own');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a", "attributes": {}}, {"slug": "lxc:c", "attributes": {}}]') $$,
	'AL002', 'record_probes: "lxc:c" appears more than once', 'an entity twice');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a", "attributes": {}, "checks": [{"name": "x", "status": "great"}]}]') $$,
	'AL002', 'record_probes: a check of "vm:a" needs a name and a status (ok, warning, failing, unknown)', 'a check with an unknown status');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a", "attributes": {}, "checks": [{"status": "ok"}]}]') $$,
	'AL002', 'record_probes: a check of "vm:a" needs a name and a status (ok, warning, failing, unknown)', 'a check without a name');
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "lxc:c", "attributes": {"health": "healthy"}, "checks": [{"name": "container", "status": "ok"}]}, {"slug": "vm:a", "attributes": {}, "checks": ["ok"]}]') $$,
	'AL002', 'record_probes: a check of "vm:a" needs a name and a status (ok, warning, failing, unknown)', 'a check that is not an object');
SELECT is(pg_temp.all_state(), (SELECT s FROM before), 'none of the refused calls wrote anything');
SELECT is(airlock.record_probes('[]'), '{}'::text[], 'an empty round writes nothing and knows everything');
RESET SESSION AUTHORIZATION;

-- Only the scheduler records probes.
SET SESSION AUTHORIZATION p_agent;
SELECT throws_ok($$ SELECT airlock.record_probes('[{"slug": "vm:a", "attributes": {"health": "healthy"}}]') $$,
	'42501', NULL, 'an agent cannot call record_probes');
RESET SESSION AUTHORIZATION;
SELECT is(has_function_privilege('public', 'airlock.record_probes(jsonb)', 'EXECUTE'), false,
	'PUBLIC cannot call it');

SELECT * FROM finish();
