-- fairclaim.sql -- the claim that skips full nodes, giving a row back from
-- wherever it stands, and the reaper that knows its own daemon (migration
-- 0032), with pgTAP.
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory('{"entities": [
  {"slug": "proxmox-host:a", "type": "proxmox-host", "address": "127.0.0.1"},
  {"slug": "proxmox-host:b", "type": "proxmox-host", "address": "127.0.0.2"},
  {"slug": "lxc:on-a", "type": "lxc", "node": "proxmox-host:a", "vmid": 201,
   "attributes": {"container_status": "running"}}]}');
SELECT airlock.seed_policy('rules: []', 'fair claim test', '[]');
CREATE ROLE f_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE f_worker LOGIN IN ROLE airlock_worker;

SET SESSION AUTHORIZATION f_agent;
SELECT airlock.run('lxc:on-a', 'echo a1') AS a1 \gset
SELECT airlock.run('proxmox-host:a', 'echo a2') AS a2 \gset
SELECT airlock.run('proxmox-host:b', 'echo b1') AS b1 \gset
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ full nodes
SET SESSION AUTHORIZATION f_worker;
-- Rows waiting to be classified are claimed whatever their node.
SELECT is((SELECT id FROM airlock.worker_claim('d/1', NULL, ARRAY['proxmox-host:a'])), :a1::bigint,
  'a row to classify is claimed although its node is full');
SELECT airlock.worker_classified(:a1, 'd/1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT is(airlock.worker_settle(:a1, 'd/1', 0, NULL), 'released', 'given back, queued');
SELECT id FROM airlock.worker_claim('d/1', :a2, NULL);
SELECT airlock.worker_classified(:a2, 'd/1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_settle(:a2, 'd/1', 0, NULL);
SELECT id FROM airlock.worker_claim('d/1', :b1, NULL);
SELECT airlock.worker_classified(:b1, 'd/1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_settle(:b1, 'd/1', 0, NULL);
SELECT is((SELECT string_agg(state, ',' ORDER BY id) FROM airlock.executions), 'queued,queued,queued',
  'three queued rows, two on node a (one of them in a container), one on node b');
SELECT is((SELECT id FROM airlock.worker_claim('d/1', :a1, ARRAY['proxmox-host:a'])), :b1::bigint,
  'a wake-up naming a row of a full node claims the next row of another node');
SELECT airlock.worker_settle(:b1, 'd/1', 0, NULL);
SELECT is((SELECT count(*) FROM airlock.worker_claim('d/2', NULL, ARRAY['proxmox-host:a', 'proxmox-host:b'])),
  0::bigint, 'with every node full nothing is claimed');
SELECT is((SELECT id FROM airlock.worker_claim('d/2', NULL, '{}')), :a1::bigint,
  'with no node full the oldest row is claimed');

-- ------------------------------------------------------------ giving back, whatever happened
SELECT is((SELECT claimed_by FROM airlock.executions WHERE id = :a1), 'd/2', 'd/2 holds it');
SELECT is((SELECT id FROM airlock.worker_claim('d/2', NULL, '{}')), :a2::bigint,
  'the same worker claims again: the next row');
SELECT is((SELECT claimed_by FROM airlock.executions WHERE id = :a1), NULL,
  'and the row it still held is given back first');
SELECT is((SELECT detail->>'released' FROM airlock.execution_events WHERE execution_id = :a1 ORDER BY id DESC LIMIT 1),
  'given back: its worker moved on after a write about it failed', 'saying why');
SELECT airlock.worker_start(:a2, 'd/2', NULL, '{}', 'user');
SELECT is(airlock.worker_settle(:a2, 'd/2', 0, 'the start was not confirmed'), 'not_sent',
  'a row marked running whose command never left goes back');
SELECT is((SELECT state || ' ' || coalesce(claimed_by, '-') || ' ' || coalesce(confinement, '-')
  FROM airlock.executions WHERE id = :a2), 'queued - -', 'to queued, unclaimed, with no confinement');
SELECT is((SELECT (detail->>'not_sent') || ' ' || (detail->>'nothing_ran') FROM airlock.execution_events
  WHERE execution_id = :a2 AND from_state = 'running'), 'true true', 'its event says nothing ran');
SELECT is(airlock.worker_settle(:a2, 'd/2', 0, NULL), 'not_held', 'a second call finds it not held');
SELECT is(airlock.worker_settle(:b1, 'other/1', 0, NULL), 'not_held', 'nor may another worker give it back');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()), 0::bigint,
  'no liveness lock is left behind');

-- ------------------------------------------------------------ the reaper knows its daemon
-- The server must be older than the grace used below (see "young" in worker_reap).
SELECT pg_sleep(greatest(0, 6 - extract(epoch FROM now() - pg_postmaster_start_time())));
SET SESSION AUTHORIZATION f_worker;
SELECT id FROM airlock.worker_claim('d1/0', :a1, NULL);
SELECT airlock.worker_start(:a1, 'd1/0', NULL, '{}', 'user');
SELECT id FROM airlock.worker_claim('d2/0', :b1, NULL);
SELECT airlock.worker_start(:b1, 'd2/0', NULL, '{}', 'user');
SELECT is(airlock.worker_reap('d2', NULL, 0), 2, 'the first reap of d2 settles d1''s row (d1 never seen)');
SELECT is((SELECT state FROM airlock.executions WHERE id = :a1), 'outcome_unknown', 'as before: outcome_unknown');
SELECT is((SELECT state FROM airlock.executions WHERE id = :b1), 'outcome_unknown',
  'd2''s own row, which no worker of d2 named, too');
SET SESSION AUTHORIZATION f_agent;
SELECT airlock.run('proxmox-host:a', 'echo c1') AS c1 \gset
SELECT airlock.run('proxmox-host:b', 'echo c2') AS c2 \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION f_worker;
SELECT id FROM airlock.worker_claim('d1/0', :c1, NULL);
SELECT airlock.worker_classified(:c1, 'd1/0', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:c1, 'd1/0', NULL, '{}', 'user');
SELECT id FROM airlock.worker_claim('d2/3', :c2, NULL);
SELECT airlock.worker_classified(:c2, 'd2/3', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:c2, 'd2/3', NULL, '{}', 'user');
SELECT is(airlock.worker_reap('d1', ARRAY[:c1]::bigint[], 5000), 0,
  'd1 names the row its worker works on: not settled; d2 was seen just now: its row waits');
SELECT is(airlock.worker_reap('d2', ARRAY[:c2]::bigint[], 5000), 0, 'the same from d2''s side');
SELECT is((SELECT string_agg(state, ',' ORDER BY id) FROM airlock.executions WHERE id IN (:c1, :c2)),
  'running,running', 'both still running, still claimed');
RESET SESSION AUTHORIZATION;
UPDATE airlock.worker_daemons SET seen_at = now() - interval '2 days' WHERE worker = 'd1';
SET SESSION AUTHORIZATION f_worker;
SELECT is(airlock.worker_reap('d2', ARRAY[:c2]::bigint[], 86400000), 0,
  'a server up for less than the grace settles no other daemon''s row (time to come back after a restart)');
SELECT is(airlock.worker_reap('d2', ARRAY[:c2]::bigint[], 5000), 1,
  'd1 unseen for longer than the grace: d2 settles its row');
SELECT is((SELECT detail->>'reaped_by' FROM airlock.execution_events WHERE execution_id = :c1 AND to_state = 'outcome_unknown'),
  'd2', 'the event says who settled it');
SELECT airlock.worker_gone('d2');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.worker_daemons WHERE worker = 'd2'), 0::bigint,
  'a daemon that stops is no longer waited for');
SELECT is((SELECT count(*) FROM airlock.worker_daemons), 1::bigint, 'the table lists the daemons seen');
SET SESSION AUTHORIZATION f_agent;
SELECT throws_ok($$ SELECT * FROM airlock.worker_daemons $$, '42501', NULL, 'agents cannot read it');
SELECT throws_ok($$ SELECT airlock.worker_reap('x', NULL, 0) $$, '42501', NULL, 'nor reap');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ a refusal with what the guard made
SET SESSION AUTHORIZATION f_agent;
SELECT airlock.run('proxmox-host:a', 'echo g1') AS g1 \gset
SELECT airlock.run('proxmox-host:a', 'echo p1') AS p1 \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION f_worker;
SELECT id FROM airlock.worker_claim('d3/0', :g1, NULL);
SELECT throws_ok(format($$ SELECT airlock.worker_refuse(%s, 'd3/0', 'x', '{}', '{}') $$, :g1), 'AL002',
  'worker_refuse: rewind_points must be a JSON array', 'rewind points must be an array');
SELECT airlock.worker_refuse(:g1, 'd3/0', 'refused by the guard', '{}',
  '[{"vpg_name": "v1", "checkpoint_id": "77", "tag": "t"}]');
SELECT is((SELECT state || ' ' || (rewind_points->0->>'checkpoint_id') FROM airlock.executions WHERE id = :g1),
  'refused 77', 'a refused row records the checkpoint its guard made anyway');

-- ------------------------------------------------------------ the clock steps forward
SELECT id FROM airlock.worker_claim('d3/0', :p1, NULL);
SELECT airlock.worker_classified(:p1, 'd3/0', 'config_mutation', '[]', 1, 'test', 'none', false);
SELECT expires_at AS p1_expires FROM airlock.executions WHERE id = :p1 \gset
SELECT now() AS before_step \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION f_worker;
SELECT is(airlock.worker_clock_stepped_forward('d3', 7200000, :'before_step'), 1,
  'a forward step moves the open deadline of the pending row');
SELECT is((SELECT expires_at - :'p1_expires'::timestamptz FROM airlock.executions WHERE id = :p1),
  interval '2 hours', 'by the step');
SELECT is((SELECT detail->>'moved' FROM airlock.execution_events WHERE execution_id = :p1 AND detail ? 'clock_stepped_forward_ms'),
  'expires_at', 'with an event saying why');
SELECT is(airlock.worker_clock_stepped_forward('d4', 7230000, :'before_step'), 0,
  'the same step noticed by another daemon moves nothing again');
SELECT throws_ok($$ SELECT airlock.worker_clock_stepped_forward('d3', 0, now()) $$, 'AL002', NULL,
  'a step must be positive');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.clock_steps), 1::bigint, 'one step recorded');

SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the chain and the records verify');

SELECT * FROM finish();
