-- sidedoor.sql -- the agent's SQL door, limited everywhere (migration 0030),
-- attacked as an agent (pgTAP): each function flooded in one statement and
-- call by call, refused at its limit with nothing written past it; a guard
-- within one checkpoint cadence reuses the checkpoint; each agent's scope
-- (requests refused at the door, reads answering only inside it); agents
-- read only their own tool requests; what agents' hosts report is kept as
-- not verified and announced once per host per interval.
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory($$ {"entities": [
  {"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "10.9.0.1", "port": 2222},
  {"slug": "proxmox-host:nyx", "type": "proxmox-host", "address": "10.9.0.2"},
  {"slug": "vm:web01", "type": "vm", "node": "proxmox-host:hubris", "vmid": 101,
   "attributes": {"qemu_guest_agent": "running"}},
  {"slug": "vm:web02", "type": "vm", "node": "proxmox-host:hubris", "vmid": 102,
   "attributes": {"qemu_guest_agent": "running"}},
  {"slug": "vm:db01", "type": "vm", "node": "proxmox-host:nyx", "vmid": 201,
   "attributes": {"qemu_guest_agent": "running"}},
  {"slug": "lxc:cache", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 301,
   "attributes": {"container_status": "running"}}],
  "relationships": [{"source": "vm:web01", "target": "vm:db01", "type": "depends-on"},
                    {"source": "vm:web01", "target": "lxc:cache", "type": "uses"}]} $$);
SELECT airlock.seed_inventory(jsonb_build_object('entities', (SELECT jsonb_agg(jsonb_build_object(
  'slug', 'lxc:c' || g, 'type', 'lxc', 'node', 'proxmox-host:hubris', 'vmid', 1000 + g))
  FROM generate_series(1, 70) g)));
SELECT airlock.seed_policy('rules: []', 'sidedoor.sql', '[]');
CREATE ROLE sd_ares LOGIN IN ROLE airlock_agent;
CREATE ROLE sd_iris LOGIN IN ROLE airlock_agent;
CREATE ROLE sd_intern1 LOGIN IN ROLE airlock_agent;
CREATE ROLE sd_ada LOGIN IN ROLE airlock_operator;
CREATE ROLE sd_probe LOGIN IN ROLE airlock_scheduler;
GRANT USAGE ON SCHEMA public TO PUBLIC;
SELECT airlock.set_destination('nyx-ipmi.example', 'managed', 'proxmox-host:nyx');

-- The SQLSTATE a statement raises, or 'ok'.
CREATE FUNCTION pg_temp.outcome(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE sql;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END
$$;
-- Calls `sql` (with %s for the call's number) one statement at a time, up
-- to `tries` times, and returns how many calls were accepted before the
-- first refusal and that refusal's SQLSTATE ("n:STATE").
CREATE FUNCTION pg_temp.until_refused(sql text, tries integer) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	i integer;
BEGIN
	FOR i IN 1..tries LOOP
		BEGIN
			EXECUTE format(sql, i);
		EXCEPTION WHEN OTHERS THEN
			RETURN (i - 1) || ':' || SQLSTATE;
		END;
	END LOOP;
	RETURN tries || ':none';
END
$$;
GRANT EXECUTE ON FUNCTION pg_temp.outcome(text), pg_temp.until_refused(text, integer) TO PUBLIC;

-- ============================================================ the limits in force
SELECT is((SELECT hook_match_candidates || ' ' || hook_match_per_minute || ' ' || report_bytes || ' '
  || hook_events_per_minute || ' ' || host_checks_per_minute || ' ' || tool_requests_per_minute || ' '
  || tool_requests_pending || ' ' || guards_per_minute || ' ' || attribute_updates_per_minute || ' '
  || relationships_per_minute FROM airlock.gate_door_limits), '64 300 16384 60 6 5 20 10 60 60',
  'the door limits default to what gate.yaml documents');
SELECT is((SELECT count(*) FROM airlock.gate_scopes), 0::bigint, 'no scope by default');
DELETE FROM airlock.gate_door_limits;
SELECT is((airlock._door_limits()).guards_per_minute, 10, 'with no row, the limits are the defaults');
SELECT is(airlock.seed_gate('door v2', 'sidedoor.sql', $$ {
  "classes": {"config_mutation": {"quorum": 1, "ttl_s": 3600, "approval_valid_for_s": 900},
              "destructive": {"quorum": 2, "ttl_s": 3600, "approval_valid_for_s": 900}},
  "rules": [], "limits": {"requests_per_minute": 1000, "pending_per_agent": 1000, "attribute_bytes": 65536,
                          "attribute_keys": 256, "relationships_per_entity": 256},
  "door_limits": {"hook_match_candidates": 8, "hook_match_per_minute": 20, "report_bytes": 2048,
                  "hook_events_per_minute": 5, "host_checks_per_minute": 2, "tool_requests_per_minute": 3,
                  "tool_requests_pending": 4, "guards_per_minute": 3, "attribute_updates_per_minute": 4,
                  "relationships_per_minute": 3},
  "scopes": []} $$), 2::bigint, 'a gate policy with door limits becomes version 2');
SELECT is((SELECT hook_match_candidates || ' ' || guards_per_minute || ' ' || gate_version FROM airlock.gate_door_limits),
  '8 3 2', 'its door limits are in force, with its version');
SELECT throws_ok($$ SELECT airlock.seed_gate('bad door', 'sidedoor.sql', '{"classes": {"config_mutation": {"quorum": 1, "ttl_s": 60, "approval_valid_for_s": 60}, "destructive": {"quorum": 2, "ttl_s": 60, "approval_valid_for_s": 60}}, "rules": [], "limits": {"requests_per_minute": 1, "pending_per_agent": 1, "attribute_bytes": 65536, "attribute_keys": 1, "relationships_per_entity": 1}, "door_limits": {"hook_match_candidates": 0}}') $$,
  'AL002', NULL, 'a door limit out of range is refused by the database too');
SELECT is((SELECT max(version) FROM airlock.gate_policies), 2::bigint, '... and nothing of it stays');
SELECT is((SELECT hook_match_candidates FROM airlock.gate_door_limits), 8, '... the limits in force are unchanged');

-- ============================================================ hook_match
SET SESSION AUTHORIZATION sd_ares;
SELECT throws_like($$ SELECT * FROM airlock.hook_match(ARRAY['a1','a2','a3','a4','a5','a6','a7','a8','a9']) $$,
  '%9 destinations in one call; the gate policy allows 8 (hook_match_candidates)%',
  'hook_match: more destinations than one call may ask about is refused, naming the limit');
SELECT is(pg_temp.outcome($$ SELECT * FROM airlock.hook_match(ARRAY['a1','a2','a3','a4','a5','a6','a7','a8','a9']) $$),
  'AL010', '... with AL010');
SELECT throws_like($$ SELECT count(*) FROM generate_series(1, 2000) g, airlock.hook_match(ARRAY['10.9.' || (g / 256) || '.' || (g % 256)]) $$,
  '%already used 20 of 20 destinations allowed per minute (hook_match_per_minute)%',
  'a sweep of 2000 addresses in one statement is refused at the 21st, naming the limit');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.door_calls WHERE login = 'sd_ares'), 0::bigint,
  'the refused calls and statement left nothing counted');
SET SESSION AUTHORIZATION sd_ares;
SELECT is((SELECT count(*) FROM airlock.hook_match(ARRAY['10.9.0.1', '10.9.0.1', 'HUBRIS'])), 2::bigint,
  'a call within the bound answers (duplicates count once)');
SELECT is(pg_temp.until_refused($$ SELECT * FROM airlock.hook_match(ARRAY['p%1$sa', 'p%1$sb', 'p%1$sc', 'p%1$sd', 'p%1$se', 'p%1$sf']) $$, 10),
  '3:AL010', 'hook_match per minute: 2 + 3 x 6 = 20 destinations answered, the next call of 6 refused');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT sum(n) FROM airlock.door_calls WHERE login = 'sd_ares' AND fn = 'hook_match'), 20::bigint,
  'nothing past the limit was counted');
SELECT is(airlock._limits_apply(), false, 'a superuser is not held to the limits');

-- ============================================================ hook_event: size, flood, provenance
SET SESSION AUTHORIZATION sd_ares;
SELECT throws_like($$ SELECT airlock.hook_event('Bash', 'deny', 'x', jsonb_build_object('command', repeat('y', 3000))) $$,
  '%the gate policy allows 2048 (report_bytes)%', 'hook_event: a report over report_bytes is refused');
SELECT is(pg_temp.until_refused($$ SELECT airlock.hook_event('Bash', 'deny', 'denied %s', '{"host": "agent-box"}') $$, 20),
  '5:AL010', 'hook_event: 5 per minute accepted, the 6th refused');
SELECT throws_like($$ SELECT airlock.hook_event('Bash', 'allow', 'allowed, approved by alice by phone') FROM generate_series(1, 100) $$,
  '%already recorded 5 hook events in the last minute; the gate policy allows 5 per minute (hook_events_per_minute)%',
  '100 forged events in one statement are refused at the limit');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.hook_events WHERE agent = 'sd_ares'), 5::bigint, 'only the 5 within the limit were written');
SELECT is((SELECT host || '|' || (client_addr IS NULL)::text FROM airlock.hook_events WHERE agent = 'sd_ares' ORDER BY id LIMIT 1),
  'agent-box|true', 'an event keeps the host its hook named and the connection''s address (a local socket here)');
SELECT is((SELECT DISTINCT provenance FROM airlock.side_door WHERE source = 'hook'),
  'reported by the agent''s host, not verified', 'operators see every hook event as reported, not verified');
SELECT is((SELECT DISTINCT verified FROM airlock.side_door WHERE source = 'hook'), false, '... and not verified');

-- ============================================================ report_host_check
SET SESSION AUTHORIZATION sd_ares;
SELECT is(pg_temp.until_refused($$ SELECT airlock.report_host_check('agent-box', 1, '[{"status": "open", "detail": "this host logs in to hubris as root with ~/.ssh/id_ed25519"}]') $$, 10),
  '2:AL010', 'report_host_check: 2 per minute accepted, the 3rd refused');
SELECT throws_ok($$ SELECT airlock.report_host_check('agent-box', -1, '[]') $$, 'AL002', NULL, 'a negative count is refused');
SELECT throws_ok($$ UPDATE airlock.host_checks SET open_doors = 0 $$, '42501', NULL, 'an agent cannot rewrite its reports');
RESET SESSION AUTHORIZATION;
SELECT throws_like($$ DELETE FROM airlock.host_checks $$, '%append-only%', 'not even the owner can (append-only)');
SELECT is((SELECT count(*) FROM airlock.side_door WHERE source = 'host_check' AND finding = '1 open door(s)'
  AND detail LIKE 'this host logs in to hubris%' AND provenance = 'reported by the agent''s host, not verified'),
  2::bigint, 'operators see each report, its open doors and what they are, as not verified');

-- ============================================================ announcing, once per host per interval
SET SESSION AUTHORIZATION sd_probe;
SELECT is((SELECT host_key || ' ' || hosts || ' ' || agents || ' ' || denials || ' ' || asks || ' ' || open_reports
  FROM airlock.side_door_due(600)), 'local agent-box sd_ares 5 0 2',
  'the scheduler gets one announcement for the host: 5 denials, 2 open-door reports');
SELECT is((SELECT count(*) FROM airlock.side_door_due(600)), 0::bigint, 'nothing new: nothing to announce');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_iris;
SELECT airlock.hook_event('Bash', 'ask', 'asked ' || g) FROM generate_series(1, 3) g;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_probe;
SELECT is((SELECT count(*) FROM airlock.side_door_due(600)), 0::bigint,
  'new reports from the same host within the interval are not announced yet');
SELECT is((SELECT denials || ' ' || asks FROM airlock.side_door_due(0)), '0 3',
  'once the interval has passed, one announcement sums what came meanwhile');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ares;
SELECT throws_ok($$ SELECT * FROM airlock.side_door_due(0) $$, '42501', NULL, 'an agent cannot take the announcements');
SELECT throws_ok($$ SELECT * FROM airlock.side_door $$, '42501', NULL, 'an agent cannot read the side-door view');
SELECT throws_ok($$ SELECT * FROM airlock.side_door_targets() $$, '42501', NULL,
  'an agent cannot read how to reach the nodes (side_door_targets)');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ada;
SELECT is((SELECT string_agg(slug || ' ' || address || ':' || ssh_port || ' api ' || api_port, ', ') FROM airlock.side_door_targets()),
  'proxmox-host:hubris 10.9.0.1:2222 api 8006, proxmox-host:nyx 10.9.0.2:22 api 8006',
  'an operator reads every node''s SSH and API endpoint for a host check');
SELECT is((SELECT probe_findings || ' ' || denials || ' ' || asks || ' ' || hosts_open || ' ' || open_hosts
  FROM airlock.side_door_summary()), '0 5 3 1 agent-box',
  'side_door_summary: the last day''s denials and asks, and the host whose latest check is open');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ares;
SELECT throws_ok($$ SELECT * FROM airlock.side_door_summary() $$, '42501', NULL, 'an agent cannot read the summary');
RESET SESSION AUTHORIZATION;
-- the host checks again and is closed: its latest report is what counts
UPDATE airlock.gate_door_limits SET host_checks_per_minute = 100;
SET SESSION AUTHORIZATION sd_ares;
SELECT ok(airlock.report_host_check('agent-box', 0, '[]') > 0, 'the host reports a check with no open door');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ada;
SELECT is((SELECT hosts_open || '|' || coalesce(open_hosts, '') FROM airlock.side_door_summary()), '0|',
  'side_door_summary: no host open once its latest check is closed');
SELECT is((SELECT denials FROM airlock.side_door_summary(interval '0 seconds')), 0,
  'side_door_summary: counts only within the window asked for');
RESET SESSION AUTHORIZATION;

-- ============================================================ remember_tool
SET SESSION AUTHORIZATION sd_ares;
SELECT is(pg_temp.until_refused($$ SELECT airlock.remember_tool('winrm', 'tool%s', 'mutating') $$, 10),
  '3:AL010', 'remember_tool: 3 per minute accepted, the 4th refused');
SELECT throws_like($$ SELECT airlock.remember_tool('winrm', 'flood' || g, 'read_only') FROM generate_series(1, 1000) g $$,
  '%the gate policy allows 3 per minute (tool_requests_per_minute)%', '1000 requests in one statement are refused');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.tool_requests WHERE requested_by = 'sd_ares'), 3::bigint, 'only 3 were written');
UPDATE airlock.tool_requests SET requested_at = now() - interval '2 minutes' WHERE requested_by = 'sd_ares';
SET SESSION AUTHORIZATION sd_ares;
SELECT is(airlock.remember_tool('winrm', 'fourth', 'read_only') > 0, true, 'a minute later another one is taken');
SELECT throws_like($$ SELECT airlock.remember_tool('winrm', 'fifth', 'read_only') $$,
  '%already has 4 tool requests waiting for an operator; the gate policy allows 4 (tool_requests_pending)%',
  'tool requests waiting for an operator are bounded too');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_iris;
SELECT airlock.remember_tool('ssh', 'exec2', 'exec', NULL, 'sd_iris''s human said so');
SELECT is((SELECT count(*) FROM airlock.tool_requests), 1::bigint, 'an agent reads only its own tool requests');
SELECT is((SELECT requested_by FROM airlock.tool_requests), 'sd_iris', '... its own');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ada;
SELECT is((SELECT count(*) FROM airlock.tool_requests), 5::bigint, 'an operator reads every request');
RESET SESSION AUTHORIZATION;

-- ============================================================ update_entity_attributes, create_relationship
SET SESSION AUTHORIZATION sd_ares;
SELECT is(pg_temp.until_refused($$ SELECT airlock.update_entity_attributes('vm:web01', jsonb_build_object('k%s', 1)) $$, 10),
  '4:AL010', 'update_entity_attributes: 4 calls per minute accepted, the 5th refused');
SELECT throws_like($$ SELECT airlock.update_entity_attributes('vm:web02', jsonb_build_object('k' || g, g)) FROM generate_series(1, 1000) g $$,
  '%(attribute_updates_per_minute)%', '1000 calls in one statement are refused');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM jsonb_object_keys((SELECT attributes FROM airlock.entities WHERE slug = 'vm:web01')) k WHERE k LIKE 'k%'),
  4::bigint, 'only the 4 calls within the limit changed anything');
SELECT is((SELECT attributes ? 'k1' FROM airlock.entities WHERE slug = 'vm:web02'), false, 'the flooded entity is untouched');
SET SESSION AUTHORIZATION sd_ares;
SELECT is(pg_temp.until_refused($$ SELECT airlock.create_relationship('vm:web02', 'lxc:c%s', 'uses') $$, 10),
  '3:AL010', 'create_relationship: 3 new relationships per minute, the 4th refused');
SELECT throws_like($$ SELECT airlock.create_relationship('vm:web02', 'lxc:c' || g, 'feeds') FROM generate_series(1, 60) g $$,
  '%the gate policy allows 3 per minute (relationships_per_minute)%', '60 in one statement are refused');
SELECT is(airlock.create_relationship('vm:web02', 'lxc:c1', 'uses') ->> 'created', 'false',
  'recording one that exists writes nothing and needs no allowance');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.relationships WHERE created_by = 'sd_ares'), 3::bigint, 'only 3 were written');

-- ============================================================ guard: flood limit, one checkpoint per cadence
SET SESSION AUTHORIZATION sd_ares;
SELECT is(pg_temp.until_refused($$ SELECT airlock.guard('vm:web02', 'proxmox/stop_vm') $$, 10),
  '3:AL010', 'guard: 3 per minute accepted, the 4th refused');
SELECT throws_like($$ SELECT airlock.guard('vm:web02', 'proxmox/stop_vm') FROM generate_series(1, 20) $$,
  '%the gate policy allows 3 per minute (guards_per_minute)%', '20 guards in one statement (the 60-checkpoint flood) are refused');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.executions WHERE requested_by = 'sd_ares' AND kind = 'guard'), 3::bigint,
  'only 3 guard requests were written');
-- vm:web01's checkpoints, confirmed 10 s ago on two VPGs of 60 s and 300 s cadence
INSERT INTO airlock.executions (target, target_type, command, requested_by, kind, state, started_at, finished_at, rewind_points)
VALUES ('vm:web01', 'vm', 'checkpoint before x', 'sd_ares', 'guard', 'received', now() - interval '10 seconds', NULL,
  '[{"vpg_name": "web-a", "checkpoint_id": "186", "tag": "ai:sd_ares | before x", "cadence_s": 60, "cadence_real_s": 60},
    {"vpg_name": "web-b", "checkpoint_id": "77", "tag": "ai:sd_ares | before x", "cadence_s": 300, "cadence_real_s": 300}]')
RETURNING id AS first_guard \gset
SET SESSION AUTHORIZATION sd_iris;
SELECT airlock.guard('vm:web01', 'proxmox/set_vm_config') AS reused \gset
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state || ' ' || jsonb_array_length(rewind_points) || ' ' || (rewind_points -> 0 ->> 'checkpoint_id')
  FROM airlock.executions WHERE id = :reused), 'succeeded 2 186',
  'a guard within one checkpoint cadence of the last is done at once with the same checkpoints');
SELECT ok((SELECT reasons -> 0 ->> 'words' FROM airlock.executions WHERE id = :reused)
  ~ ('^the checkpoint airlock request ' || :first_guard || ' inserted 1[0-9]\.[0-9] s ago is within one checkpoint cadence \(60\.0 s\)'),
  '... saying which request''s checkpoint it reuses, and why');
SELECT is((SELECT string_agg(coalesce(from_state, '-') || '>' || to_state, ' ' ORDER BY id) FROM airlock.execution_events
  WHERE execution_id = :reused AND from_state IS DISTINCT FROM 'record'), '->received received>queued queued>running running>succeeded',
  '... through the states a guard always takes, each an event');
SELECT is((SELECT count(*) FROM airlock.executions WHERE requested_by = 'sd_iris' AND kind = 'guard' AND state = 'received'),
  0::bigint, '... and no request for a new checkpoint is left for airlockd');
UPDATE airlock.executions SET started_at = now() - interval '70 seconds' WHERE id = :first_guard;
SET SESSION AUTHORIZATION sd_iris;
SELECT airlock.guard('vm:web01', 'proxmox/set_vm_config') AS fresh \gset
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state FROM airlock.executions WHERE id = :fresh), 'received',
  'past the shortest cadence, a new checkpoint is asked for');
UPDATE airlock.executions SET started_at = now() - interval '5 seconds',
  rewind_points = '[{"checkpoint_id": "9", "cadence_s": -1}]' WHERE id = :first_guard;
SET SESSION AUTHORIZATION sd_iris;
SELECT airlock.guard('vm:web01', 'x/y') AS unmeasured \gset
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state FROM airlock.executions WHERE id = :unmeasured), 'received',
  'a cadence that could not be measured is never reused');

-- ============================================================ scopes
SELECT ok(airlock.seed_gate('door v3', 'sidedoor.sql', $$ {
  "classes": {"config_mutation": {"quorum": 1, "ttl_s": 3600, "approval_valid_for_s": 900},
              "destructive": {"quorum": 2, "ttl_s": 3600, "approval_valid_for_s": 900}},
  "rules": [], "limits": {"requests_per_minute": 1000, "pending_per_agent": 1000, "attribute_bytes": 65536,
                          "attribute_keys": 256, "relationships_per_entity": 256},
  "door_limits": {"hook_match_per_minute": 1000, "tool_requests_per_minute": 100, "attribute_updates_per_minute": 100,
                  "relationships_per_minute": 100, "guards_per_minute": 100},
  "scopes": [{"agent": "sd_intern*", "targets": ["vm:web*", "lxc:*"], "target_types": ["vm", "lxc"], "max_class": "reversible_low"},
             {"agent": "sd_iris", "max_class": "config_mutation"}]} $$) > 2, 'scopes are a gate policy version');
SELECT is((SELECT string_agg(position || ' ' || agent || ' ' || coalesce(array_to_string(targets, ','), '*') || ' '
  || coalesce(array_to_string(target_types, ','), '*') || ' ' || max_class, '|' ORDER BY position) FROM airlock.gate_scopes),
  '1 sd_intern* vm:web*,lxc:* vm,lxc reversible_low|2 sd_iris * * config_mutation', 'in force, in order');
SELECT is((SELECT hook_match_candidates FROM airlock.gate_door_limits), 64, 'door limits it leaves out take their defaults');
SET SESSION AUTHORIZATION sd_intern1;
SELECT throws_like($$ SELECT airlock.run('proxmox-host:hubris', 'uptime') $$,
  '%run on proxmox-host:hubris refused: outside the scope of agent sd_intern1 (gate.yaml scope 1: targets vm:web*, lxc:*; types vm, lxc; up to reversible_low)%',
  'a request outside the scope is refused at the door, naming the scope');
SELECT is(pg_temp.outcome($$ SELECT airlock.run('vm:db01', 'uptime') $$), 'AL020', '... with its own SQLSTATE (AL020)');
SELECT is(pg_temp.outcome($$ SELECT airlock.run('vm:web01', 'uptime', 'config_mutation') $$), 'AL020',
  'a declared risk above the agent''s highest class is refused at the door');
SELECT is(pg_temp.outcome($$ SELECT airlock.guard('vm:db01', 'proxmox/stop_vm') $$), 'AL020', 'a guard outside the scope too');
SELECT is(pg_temp.outcome($$ SELECT airlock.update_entity_attributes('vm:db01', '{"owner": "me"}') $$), 'AL020',
  'writing attributes outside the scope is refused');
SELECT is(pg_temp.outcome($$ SELECT airlock.update_entity_attributes('vm:webzz', '{"owner": "me"}') $$), 'AL001',
  'an unknown entity inside the scope''s globs is unknown');
SELECT is(pg_temp.outcome($$ SELECT airlock.create_relationship('vm:web01', 'proxmox-host:hubris', 'runs-on') $$), 'AL020',
  'a relationship to an entity outside the scope is refused');
SELECT airlock.run('vm:web01', 'systemctl restart nginx') AS in_scope \gset
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.executions WHERE requested_by = 'sd_intern1'), 1::bigint,
  'only the request inside the scope was written');
SELECT is((SELECT count(*) FROM airlock.execution_events e JOIN airlock.executions x ON x.id = e.execution_id
  WHERE x.requested_by = 'sd_intern1'), (SELECT count(*) FROM airlock.execution_events e WHERE e.execution_id = :in_scope),
  '... and no event of the refused ones');
SELECT throws_like($$ INSERT INTO airlock.executions (target, target_type, command, requested_by, kind) VALUES ('vm:web01', 'vm', 'restore', 'sd_intern1', 'recover') $$,
  '%restoring files is a change, above the highest class agent sd_intern1 may request (reversible_low%',
  'a recovery (always a change) is refused for an agent whose ceiling is below config_mutation, whoever inserts it');
-- The class the worker finds: above the ceiling, it cannot be recorded.
UPDATE airlock.executions SET claimed_by = 'w1' WHERE id = :in_scope;
SELECT throws_like(format($$ SELECT airlock.worker_classified(%s, 'w1', 'config_mutation', '[]', 1, 'test', 'none', false) $$, :in_scope),
  '%refused: the command is classified config_mutation, above the highest class agent sd_intern1 may request (reversible_low, gate.yaml scope 1). Nothing ran.%',
  'a command classified above the agent''s ceiling cannot be recorded as classified');
SELECT is((SELECT state || ' ' || coalesce(class, '-') FROM airlock.executions WHERE id = :in_scope), 'received -',
  '... the row is as it was');
SELECT airlock.worker_refuse(:in_scope, 'w1', 'refused: the command is classified config_mutation, above the highest class agent sd_intern1 may request');
SELECT is((SELECT state FROM airlock.executions WHERE id = :in_scope), 'refused', 'the worker then refuses it; nothing ran');
-- Reads answer only inside the scope.
SET SESSION AUTHORIZATION sd_intern1;
SELECT is((SELECT string_agg(slug, ' ' ORDER BY slug) FROM airlock.entities WHERE slug !~ '^lxc:c[0-9]+$'),
  'lxc:cache vm:web01 vm:web02', 'an agent reading the entities sees only those inside its scope');
SELECT is((SELECT count(*) FROM airlock.relationships WHERE source = 'vm:web01'), 1::bigint,
  '... and only relationships between them');
SELECT is((SELECT string_agg(j ->> 'target', ' ') FROM airlock.get_relations('vm:web01') j), 'lxc:cache',
  'get_relations leaves out what lies outside the scope');
SELECT throws_like($$ SELECT * FROM airlock.get_relations('vm:db01') $$, '%unknown entity "vm:db01" (or outside your scope)%',
  'an entity outside the scope is answered as unknown');
SELECT throws_like($$ SELECT * FROM airlock.get_relations('vm:nosuch') $$, '%unknown entity "vm:nosuch" (or outside your scope)%',
  '... in the same words as one that does not exist');
SELECT is((SELECT count(*) FROM airlock.get_health_summary(NULL) j WHERE j ->> 'slug' IN ('vm:db01', 'proxmox-host:hubris')),
  0::bigint, 'get_health_summary answers only inside the scope');
SELECT is(pg_temp.outcome($$ SELECT * FROM airlock.list_checks('proxmox-host:nyx') $$), 'AL001', 'list_checks too');
SELECT is((SELECT string_agg(candidate || '=' || coalesce(slug, label), ' ' ORDER BY candidate)
  FROM airlock.hook_match(ARRAY['10.9.0.1', 'web01', 'nyx-ipmi.example'])),
  '10.9.0.1=a machine airlock manages, outside your scope nyx-ipmi.example=a machine airlock manages, outside your scope web01=vm:web01',
  'hook_match still says a node outside the scope is managed, but not which');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ares;
SELECT is((SELECT count(*) FROM airlock.entities), 76::bigint, 'an agent no scope names sees everything (the default)');
SELECT airlock.run('proxmox-host:hubris', 'uptime') AS ares_host \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_iris;
SELECT is(pg_temp.outcome($$ SELECT airlock.run('proxmox-host:hubris', 'uptime') $$), 'ok', 'a scope with only a ceiling names every target');
RESET SESSION AUTHORIZATION;
-- sd_ares's own request, once sd_ares's scope no longer covers it
SELECT ok(airlock.seed_gate('door v4', 'sidedoor.sql', $$ {
  "classes": {"config_mutation": {"quorum": 1, "ttl_s": 3600, "approval_valid_for_s": 900},
              "destructive": {"quorum": 2, "ttl_s": 3600, "approval_valid_for_s": 900}},
  "rules": [], "limits": {"requests_per_minute": 1000, "pending_per_agent": 1000, "attribute_bytes": 65536,
                          "attribute_keys": 256, "relationships_per_entity": 256},
  "scopes": [{"agent": "sd_ares", "targets": ["vm:*"]}]} $$) > 3, 'sd_ares gets a scope of VMs');
SET SESSION AUTHORIZATION sd_ares;
SELECT throws_like(format($$ SELECT airlock.get_execution(%s) $$, :ares_host), '%not found (an agent sees only its own requests, on targets inside its scope)%',
  'an agent''s own request outside its scope is not found');
SELECT is((SELECT count(*) FROM airlock.list_executions(NULL, NULL, 500, NULL) j WHERE (j ->> 'id')::bigint = :ares_host), 0::bigint,
  'list_executions leaves it out');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ada;
SELECT is(airlock.get_execution(:ares_host) ->> 'target', 'proxmox-host:hubris', 'operators see every request');
SELECT is((SELECT count(*) FROM airlock.entities), 76::bigint, '... and every entity');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION sd_ares;
SELECT is(pg_temp.outcome($$ SELECT * FROM airlock.gate_scopes $$), '42501', 'an agent cannot read other agents'' scopes');
RESET SESSION AUTHORIZATION;

SELECT * FROM finish();
