-- api.sql -- the SQL API and its rules, attacked as each role (pgTAP).
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
-- Identity in airlock is session_user, so roles are switched with
-- SET SESSION AUTHORIZATION, exactly as a login would be.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

-- An estate shaped like the incident.
SELECT airlock.seed_inventory($$ {"entities": [
  {"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1", "port": 2222},
  {"slug": "vm:zimaos", "type": "vm", "node": "proxmox-host:hubris", "vmid": 103,
   "attributes": {"qemu_guest_agent": "not_running"}},
  {"slug": "vm:nomad", "type": "vm", "node": "proxmox-host:hubris", "vmid": 104},
  {"slug": "vm:web01", "type": "vm", "node": "proxmox-host:hubris", "vmid": 101,
   "attributes": {"qemu_guest_agent": "running"}},
  {"slug": "lxc:nfs-export", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 201,
   "attributes": {"container_status": "running"}},
  {"slug": "lxc:backup", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 202,
   "attributes": {"container_status": "stopped"}}]} $$);
SELECT airlock.seed_tools('[{"server": "proxmox", "tool": "list_vms", "verdict": "read_only"},
                            {"server": "proxmox", "tool": "stop_vm", "verdict": "mutating", "vm_arg": "vmid"}]');

CREATE ROLE hermes LOGIN IN ROLE airlock_agent;
CREATE ROLE athena LOGIN IN ROLE airlock_agent;
CREATE ROLE alice LOGIN IN ROLE airlock_operator;
CREATE ROLE bob LOGIN IN ROLE airlock_operator;
CREATE ROLE carol LOGIN IN ROLE airlock_operator, airlock_agent;
CREATE ROLE worker1 LOGIN IN ROLE airlock_worker;
CREATE ROLE probe LOGIN IN ROLE airlock_scheduler;
GRANT USAGE ON SCHEMA public TO PUBLIC;

-- The worker's classification, done here by hand (the worker API is issue 5's).
CREATE FUNCTION pg_temp.classify(id bigint, cls text, needed int) RETURNS void LANGUAGE sql AS $$
	UPDATE airlock.executions SET class = cls, approvals_required = needed,
	       payload_hash = md5(target || command || cls), classified_at = now(),
	       expires_at = now() + interval '1 hour',
	       state = CASE WHEN cls IN ('read_only', 'reversible_low') THEN 'queued' ELSE 'pending_approval' END
	WHERE executions.id = classify.id;
$$;

-- Every function and table belongs to airlock_owner; PUBLIC may execute none.
SELECT is((SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'airlock' AND pg_get_userbyid(p.proowner) <> 'airlock_owner'), 0::bigint,
  'every airlock function is owned by airlock_owner (0001 and 0002 alike)');
SELECT is((SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'airlock' AND has_function_privilege('public', p.oid, 'EXECUTE')), 0::bigint,
  'PUBLIC may execute no airlock function');
SELECT is((SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'airlock' AND c.relkind IN ('r', 'v') AND c.relname <> 'schema_migrations'
             AND pg_get_userbyid(c.relowner) <> 'airlock_owner'), 0::bigint,
  'every airlock table and view is owned by airlock_owner');

-- ------------------------------------------------------------ pre-flight
SET SESSION AUTHORIZATION hermes;
SELECT throws_ok($$ SELECT airlock.run('vm:zimaos', 'ls /media/library') $$, 'AL003',
  'run on vm:zimaos blocked: QEMU guest agent is not running (qm guest exec unavailable). Start the agent first or use a different target.',
  'a VM whose guest agent is not running is refused with the exact origin message');
SELECT throws_ok($$ SELECT airlock.run('vm:nomad', 'uptime') $$, 'AL003',
  'run on vm:nomad blocked: QEMU guest agent is not running (qm guest exec unavailable). Start the agent first or use a different target.',
  'a VM with no probed guest agent attribute is refused too');
SELECT throws_ok($$ SELECT airlock.run('lxc:backup', 'uptime') $$, 'AL004',
  'run on lxc:backup blocked: container is not running (pct exec unavailable). Start the container first or use a different target.',
  'a stopped container is refused, naming pct exec');
SELECT throws_ok($$ SELECT airlock.run('vm:ghost', 'uptime') $$, 'AL001', NULL, 'unknown target is refused');
SELECT throws_ok($$ SELECT airlock.run('proxmox-host:hubris', '  ') $$, 'AL002', NULL, 'blank command is refused');
SELECT throws_ok($$ SELECT airlock.run('proxmox-host:hubris', repeat('x', 65537)) $$, 'AL002', NULL, 'a command over 64 KiB is refused');
SELECT throws_ok($$ SELECT airlock.run('proxmox-host:hubris', 'ls', 'harmless') $$, 'AL002', NULL, 'an invalid declared risk is refused');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.executions), 0::bigint, 'no refused call inserted a row');
SELECT is((SELECT count(*) FROM airlock.execution_events), 0::bigint, 'no refused call wrote an event');

-- ------------------------------------------------------------ accepted runs
SET SESSION AUTHORIZATION hermes;
SELECT is(airlock.run('proxmox-host:hubris', 'apt-get install -y nfs-kernel-server', NULL, 'chg-1', 'install NFS server'),
  1::bigint, 'an accepted run returns its id');
SELECT is(airlock.run('vm:web01', 'uptime', 'read_only'), 2::bigint, 'a VM with a running agent is accepted');
SELECT is(airlock.run('lxc:nfs-export', 'exportfs -v'), 3::bigint, 'a running container is accepted');
SELECT is(airlock.run('proxmox-host:hubris', repeat('x', 32638)), 4::bigint, 'a command exactly at the carry limit (32640 bytes quoted) is accepted');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state FROM airlock.executions WHERE id = 1), 'received', 'a new row is received');
SELECT is((SELECT requested_by FROM airlock.executions WHERE id = 1), 'hermes', 'requested_by is the session user');
SELECT is((SELECT count(*) FROM airlock.execution_events WHERE execution_id = 1 AND to_state = 'received'),
  1::bigint, 'the first event is written with the row');

-- ------------------------------------------------------------ what an agent may not do
SET SESSION AUTHORIZATION hermes;
SELECT throws_ok($$ SELECT airlock.approve(1, 'self') $$, '42501', NULL, 'an agent cannot call approve: permission denied');
SELECT throws_ok($$ SELECT airlock.reject(1, 'no') $$, '42501', NULL, 'an agent cannot call reject');
SELECT throws_ok($$ UPDATE airlock.executions SET state = 'approved' WHERE id = 1 $$, '42501', NULL,
  'an agent cannot update executions');
SELECT throws_ok($$ INSERT INTO airlock.execution_events (id, execution_id, actor, to_state, prev_hash, hash) VALUES (0, 1, 'x', 'approved', '', '') $$,
  '42501', NULL, 'an agent cannot write events');
SELECT throws_ok($$ UPDATE airlock.entities SET attributes = '{"health": "healthy"}' $$, '42501', NULL,
  'an agent cannot write entities directly');
SELECT throws_ok($$ SELECT airlock.record_probe('vm:web01', '{"health": "healthy"}') $$, '42501', NULL,
  'an agent cannot call the scheduler''s record_probe');
SELECT throws_ok($$ SELECT airlock.seed_inventory('{}') $$, '42501', NULL, 'an agent cannot seed');
SELECT throws_ok($$ SELECT airlock.audit_verify() $$, '42501', NULL, 'audit verification is for operators');
SELECT is(airlock.update_entity_attributes('vm:web01', '{"health": "healthy", "owner": "team-a", "qemu_guest_agent": "running"}'),
  jsonb_build_object('slug', 'vm:web01', 'merged', '["owner"]'::jsonb,
    'dropped', '[{"key": "health", "reason": "health is scheduler-owned; attribute ignored. Use get_health_summary/list_checks to observe it."},
                 {"key": "qemu_guest_agent", "reason": "qemu_guest_agent is scheduler-owned (probed with qm agent ping); attribute ignored. Use get_health_summary to observe it."}]'::jsonb,
    'attributes', '{"owner": "team-a", "qemu_guest_agent": "running"}'::jsonb),
  'update_entity_attributes merges ordinary keys and names each dropped scheduler-owned key');
SELECT throws_ok($$ SELECT airlock.update_entity_attributes('vm:web01', '[1]') $$, 'AL002', NULL, 'attributes must be an object');
SELECT throws_ok($$ SELECT airlock.update_entity_attributes('vm:nope', '{}') $$, 'AL001', NULL, 'unknown entity');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT attributes ->> 'health' FROM airlock.entities WHERE slug = 'vm:web01'), NULL, 'health was not written');

-- ------------------------------------------------------------ relationships
SET SESSION AUTHORIZATION hermes;
SELECT is(airlock.create_relationship('vm:zimaos', 'lxc:nfs-export', 'depends-on') ->> 'created', 'true', 'an agent records a dependency');
SELECT is(airlock.create_relationship('vm:zimaos', 'lxc:nfs-export', 'depends-on') ->> 'created', 'false', 'recording it twice is idempotent');
SELECT throws_ok($$ SELECT airlock.create_relationship('vm:zimaos', 'vm:zimaos', 'depends-on') $$, 'AL002', NULL, 'no self-relationships');
SELECT throws_ok($$ SELECT airlock.create_relationship('vm:zimaos', 'lxc:nfs-export', 'Depends On') $$, 'AL002', NULL, 'relationship types are checked');
SELECT throws_ok($$ SELECT airlock.create_relationship('vm:zimaos', 'lxc:ghost', 'depends-on') $$, 'AL001', NULL, 'relationship endpoints must exist');
SELECT is((SELECT count(*) FROM airlock.get_relations('lxc:nfs-export') r WHERE r ->> 'direction' = 'in'), 1::bigint,
  'get_relations shows the edge from the target''s side');
SELECT is((SELECT r ->> 'created_by' FROM airlock.get_relations('vm:zimaos') r), 'hermes', 'the edge records who made it');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ scheduler
SET SESSION AUTHORIZATION probe;
SELECT lives_ok($$ SELECT airlock.record_probe('vm:zimaos', '{"qemu_guest_agent": "running", "health": "healthy"}',
  '[{"name": "guest-agent", "status": "ok", "detail": "qm agent 103 ping"}]') $$, 'the scheduler writes probed attributes and checks');
SELECT throws_ok($$ SELECT airlock.record_probe('vm:zimaos', '{"owner": "x"}') $$, 'AL002', NULL,
  'the scheduler writes only scheduler-owned keys');
SELECT throws_ok($$ SELECT airlock.run('vm:zimaos', 'ls') $$, '42501', NULL, 'the scheduler cannot enqueue');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION hermes;
SELECT is((SELECT s ->> 'qemu_guest_agent' FROM airlock.get_health_summary('vm:zimaos') s), 'running', 'the probe is visible to agents');
SELECT is((SELECT c ->> 'status' FROM airlock.list_checks('vm:zimaos') c), 'ok', 'checks are listed');
SELECT is(airlock.run('vm:zimaos', 'ls /media/library'), 5::bigint, 'once the agent is probed running, the VM is accepted');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ the gate
SELECT pg_temp.classify(1, 'config_mutation', 1);
SELECT pg_temp.classify(4, 'destructive', 2);
SET SESSION AUTHORIZATION carol;
SELECT is(airlock.run('proxmox-host:hubris', 'systemctl restart pveproxy'), 6::bigint, 'an operator may also request');
RESET SESSION AUTHORIZATION;
SELECT pg_temp.classify(6, 'config_mutation', 1);
SET SESSION AUTHORIZATION carol;
SELECT throws_ok($$ SELECT airlock.approve(6) $$, 'AL009', NULL, 'a login that is both operator and agent never approves, its own request included');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION alice;
SELECT throws_ok($$ SELECT airlock.approve(2) $$, 'AL005', NULL, 'a received row cannot be approved');
SELECT throws_ok($$ SELECT airlock.reject(1, '') $$, 'AL002', NULL, 'reject needs a reason');
SELECT is(airlock.approve(1, 'maintenance window'), 'approved', 'one approver suffices for config_mutation');
SELECT throws_ok($$ SELECT airlock.approve(1) $$, 'AL005', NULL, 'an approved row cannot be approved again');
-- Execution 4's command is 32,638 bytes, longer than a screen: each approver
-- says they read it (gate.yaml hard_to_read, migration 0033).
SELECT is(airlock.approve(4, confirmed => true), 'pending_approval', 'destructive needs a second approver');
SELECT throws_ok($$ SELECT airlock.approve(4, confirmed => true) $$, 'AL005', NULL, 'the same operator cannot count twice');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION bob;
SELECT is(airlock.approve(4, confirmed => true), 'approved', 'a second, different approver completes the quorum');
SELECT is(airlock.reject(6, 'not during business hours'), 'rejected', 'an operator rejects with a reason');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION hermes;
SELECT throws_ok($$ SELECT airlock.get_execution(6) $$, 'AL007', NULL, 'an agent cannot read another requester''s row');
SELECT is(airlock.get_execution(1) ->> 'state', 'approved', 'an agent reads its own row');
SELECT ok(airlock.get_execution(1) ->> 'next_step' LIKE 'Approved; it will run shortly.%', 'the row says what to do next');
SELECT is((SELECT count(*) FROM airlock.list_executions()), 5::bigint, 'list_executions shows only the agent''s own rows');
SELECT throws_ok($$ SELECT airlock.list_executions('bogus') $$, 'AL002', NULL, 'list_executions checks the state');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION carol;
SELECT ok(airlock.get_execution(6) ->> 'next_step' LIKE 'Rejected by an operator: not during business hours.%',
  'a rejection reaches the requester with its reason');
RESET SESSION AUTHORIZATION;

-- payload binding: a vote given for one payload does not count for another
SELECT pg_temp.classify(5, 'config_mutation', 1);
SET SESSION AUTHORIZATION alice;
SELECT is(airlock.approve(5), 'approved', 'approve 5');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT payload_hash FROM airlock.approvals WHERE execution_id = 5),
          (SELECT payload_hash FROM airlock.executions WHERE id = 5), 'the approval records the payload hash it approved');

-- expiry
SELECT pg_temp.classify(3, 'config_mutation', 1);
UPDATE airlock.executions SET expires_at = now() - interval '1 second' WHERE id = 3;
SET SESSION AUTHORIZATION alice;
SELECT is(airlock.approve(3), 'expired', 'an approval after the TTL finds the request expired');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state FROM airlock.executions WHERE id = 3), 'expired', 'expiry is an outcome');

-- ------------------------------------------------------------ cancel
SET SESSION AUTHORIZATION athena;
SELECT throws_ok($$ SELECT airlock.cancel(2) $$, 'AL007', NULL, 'an agent cannot cancel another agent''s request');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION hermes;
SELECT is(airlock.cancel(2), 'cancelled', 'the requester cancels its own request');
SELECT throws_ok($$ SELECT airlock.cancel(2) $$, 'AL005', NULL, 'a cancelled request stays cancelled');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ the state machine
SELECT throws_ok($$ UPDATE airlock.executions SET state = 'running' WHERE id = 6 $$, 'AL005', NULL,
  'rejected -> running is illegal even for the owner');
SELECT throws_ok($$ UPDATE airlock.executions SET state = 'succeeded' WHERE id = 1 $$, 'AL005', NULL,
  'approved -> succeeded skips running: illegal');
SELECT lives_ok($$ UPDATE airlock.executions SET state = 'running' WHERE id = 1 $$, 'approved -> running is legal');
SELECT throws_ok($$ UPDATE airlock.executions SET command = 'reboot' WHERE id = 1 $$, 'AL005', NULL,
  'the command of a row never changes');
SET SESSION AUTHORIZATION hermes;
SELECT throws_ok($$ SELECT airlock.cancel(1) $$, 'AL005', NULL, 'a running request cannot be cancelled');
RESET SESSION AUTHORIZATION;

-- Every state tells the agent what to do next, even with timestamps unset.
INSERT INTO airlock.executions (target, target_type, command, requested_by, state)
SELECT 'proxmox-host:hubris', 'proxmox-host', 'true', 'hermes', s
FROM unnest(ARRAY['pending_approval', 'running', 'refused', 'outcome_unknown']) s;
SELECT is((SELECT count(*) FROM airlock.executions e WHERE airlock._next_step(e) IS NULL), 0::bigint,
  'every row, in every state, has a next step');
-- Requests are never deleted; the test's own scaffolding goes with the
-- triggers off.
SET session_replication_role = replica;
DELETE FROM airlock.executions WHERE command = 'true' AND NOT EXISTS (
  SELECT 1 FROM airlock.execution_events v WHERE v.execution_id = executions.id);
RESET session_replication_role;

-- ------------------------------------------------------------ check_tool
SET SESSION AUTHORIZATION hermes;
SELECT is(airlock.check_tool('proxmox', 'list_vms') ->> 'verdict', 'read_only', 'a catalogued read-only tool');
SELECT is(airlock.check_tool('proxmox', 'stop_vm', 'web01') ->> 'verdict', 'mutating', 'a catalogued mutating tool');
SELECT is(airlock.check_tool('winrm', 'run_ps', 'web01') ->> 'verdict', 'unknown', 'an uncatalogued tool is unknown');
SELECT ok(airlock.check_tool('winrm', 'run_ps', 'web01') ->> 'advice' LIKE 'Ask the human.%unknown does not mean safe%It may change web01.%',
  'unknown tells the agent to ask its human');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ history is append-only and chained
SELECT throws_ok($$ UPDATE airlock.execution_events SET actor = 'nobody' $$, '42501', NULL,
  'events cannot be updated, even by the owner');
SELECT throws_ok($$ DELETE FROM airlock.execution_events $$, '42501', NULL, 'events cannot be deleted');
SELECT throws_ok($$ TRUNCATE airlock.execution_events CASCADE $$, '42501', NULL, 'events cannot be truncated');
SET SESSION AUTHORIZATION alice;
SELECT throws_ok($$ DELETE FROM airlock.execution_events $$, '42501', NULL, 'an operator cannot delete events');
SELECT cmp_ok(airlock.seal_events(100000), '>', 0, 'an operator may seal the events written so far');
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the chain verifies');
SELECT is((SELECT checked FROM airlock.audit_verify()), (SELECT count(*) FROM airlock.execution_events), 'every event was checked');
RESET SESSION AUTHORIZATION;

-- Tamper as a superuser with triggers off: the chain names the row.
CREATE TEMP TABLE saved AS SELECT detail FROM airlock.execution_events WHERE id = 7;
SET session_replication_role = replica;
UPDATE airlock.execution_events SET detail = '{"reason": "forged"}' WHERE id = 7;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), 7::bigint, 'an altered event is detected and named');
UPDATE airlock.execution_events SET detail = (SELECT detail FROM saved) WHERE id = 7;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'restored, the chain verifies again');
DELETE FROM airlock.execution_events WHERE id = 9;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), 10::bigint, 'a removed event breaks the next link, which is named');
RESET session_replication_role;

SELECT * FROM finish();
