-- onecall.sql -- claim, classify and start in one call (migration 0019),
-- with the rules worker_classified and worker_start enforce (pgTAP).
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory('{"entities": [
	{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1", "port": 2222,
	 "ssh_user": "root", "host_key_fingerprint": "SHA256:abc"},
	{"slug": "vm:zimaos", "type": "vm", "node": "proxmox-host:hubris", "vmid": 101,
	 "zerto_vm_identifier": "vm-101"}]}');
UPDATE airlock.entities SET attributes = attributes || '{"qemu_guest_agent": "running"}' WHERE slug = 'vm:zimaos';
SELECT airlock.seed_policy('rules: []', 'one call test', '[]');
CREATE ROLE o_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE o_worker LOGIN IN ROLE airlock_worker;

-- What a worker saw: the row's wake-up document (as the trigger sends it).
CREATE FUNCTION pg_temp.seen(x bigint) RETURNS jsonb LANGUAGE sql SECURITY DEFINER AS $$
	SELECT airlock._wake_doc(e) FROM airlock.executions e WHERE e.id = x
$$;
GRANT EXECUTE ON FUNCTION pg_temp.seen(bigint) TO PUBLIC;
-- One call as the worker; its state, or '-' when it claimed nothing.
CREATE FUNCTION pg_temp.take(w text, x bigint, seen jsonb, cls text, conf text) RETURNS text
LANGUAGE sql AS $$
	SELECT coalesce((SELECT c.state FROM airlock.worker_claim_classified(w, x, seen, cls,
		'[{"rule": "r1"}]', 1, 'test', 'no rewind point possible', false, conf) c), '-')
$$;
GRANT EXECUTE ON FUNCTION pg_temp.take(text, bigint, jsonb, text, text) TO PUBLIC;

-- ------------------------------------------------------------ the document
SET SESSION AUTHORIZATION o_agent;
SELECT airlock.run('proxmox-host:hubris', E'echo "a\tb"\nuptime') AS ro \gset
SELECT airlock.run('vm:zimaos', 'df -h', 'read_only', 'CHG-1', 'look') AS vm \gset
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.seen(:ro), jsonb_build_object('id', :ro, 'target', 'proxmox-host:hubris',
	'target_type', 'proxmox-host', 'declared_risk', NULL, 'command', E'echo "a\tb"\nuptime',
	'node', 'proxmox-host:hubris', 'address', '127.0.0.1', 'port', 2222, 'ssh_user', 'root',
	'host_key_fingerprint', 'SHA256:abc', 'vmid', 0, 'zerto_vm_identifier', NULL),
	'a host row''s document: the command as asked and how its node is reached');
SELECT is(pg_temp.seen(:vm) - 'id', jsonb_build_object('target', 'vm:zimaos', 'target_type', 'vm',
	'declared_risk', 'read_only', 'command', 'df -h', 'node', 'proxmox-host:hubris',
	'address', '127.0.0.1', 'port', 2222, 'ssh_user', 'root', 'host_key_fingerprint', 'SHA256:abc',
	'vmid', 101, 'zerto_vm_identifier', 'vm-101'),
	'a VM row''s document: its node''s address, its vmid and Zerto identifier');

-- ------------------------------------------------------------ refusals change nothing
SET SESSION AUTHORIZATION o_worker;
SELECT throws_ok(format($$ SELECT pg_temp.take('w1', %s, pg_temp.seen(%s), 'harmless', 'user') $$, :ro, :ro),
  'AL002', 'worker_claim_classified: unknown class harmless', 'an unknown class is refused');
SELECT throws_ok(format($$ SELECT pg_temp.take('w1', %s, pg_temp.seen(%s), 'read_only', 'cell') $$, :ro, :ro),
  'AL002', 'worker_claim_classified: confinement "cell" is not none, user or root',
  'an unknown confinement is refused');
SELECT throws_ok(format($$ SELECT pg_temp.take('', %s, pg_temp.seen(%s), 'read_only', 'user') $$, :ro, :ro),
  'AL002', 'worker_claim_classified: a worker id is required', 'a worker id is required');
SELECT throws_ok(format($$ SELECT pg_temp.take('w1', %s, pg_temp.seen(%s), 'read_only', 'none') $$, :ro, :ro),
  'AL008', format('execution %s: an observation that no human approved runs in the jail', :ro),
  'an observation nobody approved may not start unconfined');
SELECT is(pg_temp.take('w1', :ro, pg_temp.seen(:ro) || '{"command": "uptime"}', 'read_only', 'user'), '-',
  'a document with another command claims nothing');
SELECT is(pg_temp.take('w1', :ro, pg_temp.seen(:ro) || '{"target": "vm:zimaos"}', 'read_only', 'user'), '-',
  'nor one with another target');
SELECT is(pg_temp.take('w1', :ro, pg_temp.seen(:ro) || '{"declared_risk": "read_only"}', 'read_only', 'user'), '-',
  'nor one with another declared risk');
SELECT is(pg_temp.take('w1', :ro, pg_temp.seen(:ro) - 'address', 'read_only', 'user'), '-',
  'nor one that lacks a member');
SELECT is(pg_temp.take('w1', :ro, NULL, 'read_only', 'user'), '-', 'nor no document');
SELECT is(pg_temp.take('w1', :ro, pg_temp.seen(:vm) || jsonb_build_object('id', :ro), 'read_only', 'user'), '-',
  'nor another row''s document');
SELECT is((SELECT state || '/' || coalesce(claimed_by, '-') || '/' || coalesce(class, '-')
           FROM airlock.executions WHERE id = :ro), 'received/-/-', 'the row is as it was');
RESET SESSION AUTHORIZATION;
-- The inventory changed after the wake-up: the worker checked another node.
SELECT pg_temp.seen(:ro) AS before_doc \gset
UPDATE airlock.entities SET address = '127.0.0.2' WHERE slug = 'proxmox-host:hubris';
SET SESSION AUTHORIZATION o_worker;
SELECT is(pg_temp.take('w1', :ro, :'before_doc'::jsonb, 'read_only', 'user'), '-',
  'a document from before the node''s address changed claims nothing');
RESET SESSION AUTHORIZATION;
UPDATE airlock.entities SET address = '127.0.0.1' WHERE slug = 'proxmox-host:hubris';

-- ------------------------------------------------------------ an observation, started in the call
SELECT max(id) AS before FROM airlock.execution_events \gset
SET SESSION AUTHORIZATION o_worker;
SELECT is((SELECT c.state || '/' || c.class || '/' || c.node || '/' || c.port || '/' || c.kind
           FROM airlock.worker_claim_classified('w1', :ro, pg_temp.seen(:ro), 'read_only',
                '[{"rule": "r1"}]', 1, 'test', 'no rewind point possible', false, 'root') c),
  'running/read_only/proxmox-host:hubris/2222/run',
  'the observation is claimed, classified and started in one call, and handed over');
SELECT is(pg_temp.take('w2', :ro, pg_temp.seen(:ro), 'read_only', 'user'), '-',
  'a second call for it claims nothing');
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, NULL, 'user') $$, :ro), 'AL005', NULL,
  'nor can it be started again');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state || '/' || claimed_by || '/' || class || '/' || confinement || '/'
           || (started_at IS NOT NULL) || '/' || (classified_at IS NOT NULL) || '/' || policy_version
           || '/' || classifier_version || '/' || rewind_status || '/' || rewind_possible
           FROM airlock.executions WHERE id = :ro),
  'running/w1/read_only/root/true/true/1/test/no rewind point possible/false',
  'the row says what was classified, how it is confined, and that it started');
SELECT is((SELECT payload_hash = airlock._payload_hash(target, command, class, policy_version)
           FROM airlock.executions WHERE id = :ro), true, 'with the payload hash of what was classified');
SELECT is((SELECT string_agg(coalesce(from_state, '-') || '>' || to_state, ' ' ORDER BY id)
           FROM airlock.execution_events WHERE id > :before),
  'received>queued queued>running', 'the two transitions an auditor reads, and no record of its own');
SELECT is((SELECT detail ->> 'class' || '/' || (detail -> 'reasons' -> 0 ->> 'rule') || '/' || (detail ->> 'worker')
           FROM airlock.execution_events WHERE id > :before AND to_state = 'queued'),
  'read_only/r1/w1', 'received -> queued carries the class and the reasons');
SELECT is((SELECT detail ->> 'confinement' FROM airlock.execution_events WHERE id > :before AND to_state = 'running'),
  'root', 'queued -> running carries the confinement');
SELECT is((SELECT string_agg(to_state || ':' || coalesce(detail -> 'execution' ->> 'state', '-'), ' ' ORDER BY id)
           FROM airlock.execution_events WHERE id > :before AND detail ->> 'record' = 'execution'),
  'running:running', 'the start carries the record, of the running row');
SELECT is((SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = :ro AND classid = 0
           AND pid = pg_backend_pid()), 1::bigint, 'the calling session holds the row''s liveness lock');
SET SESSION AUTHORIZATION o_worker;
SELECT is(airlock.worker_finish(:ro, 'w1', 'succeeded', 0, NULL, 'ok', '', false, false, 3, NULL), true,
  'its result is recorded as for any started row');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ no start unless read_only and asked
SET SESSION AUTHORIZATION o_agent;
SELECT airlock.run('proxmox-host:hubris', 'uptime') AS plain \gset
SELECT airlock.run('proxmox-host:hubris', 'touch /tmp/x') AS low \gset
SELECT airlock.run('proxmox-host:hubris', 'uptime', 'config_mutation') AS raised \gset
SET SESSION AUTHORIZATION o_worker;
SELECT is(pg_temp.take('w1', :plain, pg_temp.seen(:plain), 'read_only', NULL), 'queued',
  'without a confinement an observation is claimed and queued, not started');
SELECT is(pg_temp.take('w1', :low, pg_temp.seen(:low), 'reversible_low', 'user'), 'queued',
  'a reversible change is never started by the call (its guard comes first)');
SELECT is(pg_temp.take('w1', :raised, pg_temp.seen(:raised), 'read_only', 'user'), 'pending_approval',
  'a declared risk raises the class, which then waits for approval');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT string_agg(state || '/' || coalesce(claimed_by, '-') || '/' || coalesce(confinement, '-'), ' ' ORDER BY id)
           FROM airlock.executions WHERE id IN (:plain, :low, :raised)),
  'queued/w1/- queued/w1/- pending_approval/-/-', 'queued rows stay claimed; the held one is let go');
SELECT is((SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = :raised AND classid = 0),
  0::bigint, 'and its liveness lock with it');
SELECT is((SELECT class || '/' || approvals_required FROM airlock.executions WHERE id = :raised),
  'config_mutation/1', 'held with the class it was raised to and its quorum');
SET SESSION AUTHORIZATION o_worker;
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, NULL, 'none') $$, :plain), 'AL008', NULL,
  'the queued observation keeps the jail rule on the usual path');
SELECT lives_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, NULL, 'user') $$, :plain),
  'and starts the usual way');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ what the call does not take
SET SESSION AUTHORIZATION o_agent;
SELECT airlock.run('proxmox-host:hubris', 'hostname') AS later \gset
SELECT airlock.run('proxmox-host:hubris', 'whoami') AS taken \gset
RESET SESSION AUTHORIZATION;
UPDATE airlock.executions SET run_after = now() + interval '1 hour' WHERE id = :later;
SET SESSION AUTHORIZATION o_worker;
SELECT is(pg_temp.take('w1', :later, pg_temp.seen(:later), 'read_only', 'user'), '-',
  'a row scheduled later is not taken');
SELECT is((SELECT id FROM airlock.worker_claim('w2', :taken)), :taken::bigint, 'a row another worker claimed');
SELECT is(pg_temp.take('w1', :taken, pg_temp.seen(:taken), 'read_only', 'user'), '-', 'is not taken');
SELECT is(pg_temp.take('w1', :plain, pg_temp.seen(:plain), 'read_only', 'user'), '-',
  'nor is a row past received');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ who may call it
SET SESSION AUTHORIZATION o_agent;
SELECT throws_ok(format($$ SELECT * FROM airlock.worker_claim_classified('a', %s, NULL, 'read_only', '[]', 1, 't', 'x', false, 'user') $$, :later),
  '42501', NULL, 'an agent cannot claim, classify or start a row');
SELECT throws_ok($$ SELECT airlock._wake_doc(NULL::airlock.executions) $$,
  '42501', NULL, 'nor read a wake-up document');
RESET SESSION AUTHORIZATION;

SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the chain and the records verify');

SELECT * FROM finish();
