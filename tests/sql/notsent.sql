-- notsent.sql -- a row marked running whose command was never sent
-- (migration 0021, airlock.worker_not_sent), with pgTAP: back for a retry
-- before the request's deadline, refused after it or when the target
-- refused, and only for the worker that holds the row.
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory('{"entities": [{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1"}]}');
SELECT airlock.seed_policy('rules: []', 'not sent test', '[]');
CREATE ROLE n_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE n_worker LOGIN IN ROLE airlock_worker;

SET SESSION AUTHORIZATION n_agent;
SELECT airlock.run('proxmox-host:hubris', 'echo retried') AS r \gset
SELECT airlock.run('proxmox-host:hubris', 'echo refused') AS f \gset
SELECT airlock.run('proxmox-host:hubris', 'echo late') AS l \gset
SELECT airlock.run('proxmox-host:hubris', 'echo queued') AS q \gset
RESET SESSION AUTHORIZATION;

SET SESSION AUTHORIZATION n_worker;
SELECT id FROM airlock.worker_claim('w1', :r);
SELECT airlock.worker_classified(:r, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:r, 'w1', NULL, '{}', 'user');
SELECT is((SELECT state FROM airlock.executions WHERE id = :r), 'running', 'the row is running');

-- ------------------------------------------------------------ refusals change nothing
SELECT throws_ok(format($$ SELECT airlock.worker_not_sent(%s, 'w2', 'x', 1000) $$, :r), 'AL005', NULL,
  'another worker cannot hand the row back');
SELECT throws_ok(format($$ SELECT airlock.worker_not_sent(%s, 'w1', ' ', 1000) $$, :r), 'AL002',
  'worker_not_sent: a reason is required', 'a reason is required');
SELECT throws_ok(format($$ SELECT airlock.worker_not_sent(%s, 'w1', 'x', -1) $$, :r), 'AL002',
  'worker_not_sent: retry_in_ms must not be negative', 'a negative delay is refused');
SELECT id FROM airlock.worker_claim('w1', :q);
SELECT airlock.worker_classified(:q, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT throws_ok(format($$ SELECT airlock.worker_not_sent(%s, 'w1', 'x', 1000) $$, :q), 'AL005', NULL,
  'a row that is not running cannot be handed back');
SELECT airlock.worker_release(:q, 'w1', 0, NULL);
SELECT is((SELECT state || ' ' || attempts FROM airlock.executions WHERE id = :r), 'running 0',
  'the refused calls changed nothing');

-- ------------------------------------------------------------ the node could not be reached
SELECT is(airlock.worker_not_sent(:r, 'w1', 'node proxmox-host:hubris could not be reached', 2000),
  'queued', 'nothing was sent, the node unreachable: back to queued');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state FROM airlock.executions WHERE id = :r), 'queued', 'the row is queued');
SELECT ok((SELECT claimed_by IS NULL AND started_at IS NULL AND confinement IS NULL AND attempts = 1
	AND error = 'node proxmox-host:hubris could not be reached'
	AND run_after BETWEEN now() + interval '1.9 seconds' AND now() + interval '2.1 seconds'
	FROM airlock.executions WHERE id = :r),
  'unclaimed, not started, one attempt counted, the reason on the row, due after the delay');
SELECT ok((SELECT from_state = 'running' AND to_state = 'queued'
	AND (detail->>'not_sent')::boolean AND (detail->>'nothing_ran')::boolean
	AND (detail->>'unreachable')::boolean AND detail->>'worker' = 'w1'
	AND detail->>'released' = 'node proxmox-host:hubris could not be reached'
	FROM airlock.execution_events WHERE execution_id = :r ORDER BY id DESC LIMIT 1),
  'the event says running -> queued, not sent, nothing ran, unreachable');
SELECT is((SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND objid = :r::oid
	AND pid = pg_backend_pid()), 0, 'the row''s liveness lock is let go');
UPDATE airlock.executions SET run_after = now() WHERE id = :r;
SET SESSION AUTHORIZATION n_worker;
SELECT is((SELECT id FROM airlock.worker_claim('w1', :r)), :r::bigint, 'it can be claimed again');
SELECT lives_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', 'user') $$, :r),
  'and started again');
SELECT is(airlock.worker_finish(:r, 'w1', 'succeeded', 0, NULL, '', '', false, false, 5, NULL), true,
  'and finished');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*)::int FROM airlock.execution_events WHERE execution_id = :r AND to_state = 'running'),
  2, 'two starts, one of which sent nothing');

-- ------------------------------------------------------------ the target refused
SET SESSION AUTHORIZATION n_worker;
SELECT id FROM airlock.worker_claim('w1', :f);
SELECT airlock.worker_classified(:f, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:f, 'w1', NULL, '{}', 'user');
SELECT is(airlock.worker_not_sent(:f, 'w1', 'run on lxc:x blocked: container is not running', NULL),
  'refused', 'the check on the channel refused: refused at once');
RESET SESSION AUTHORIZATION;
SELECT ok((SELECT state = 'refused' AND error = 'run on lxc:x blocked: container is not running'
	AND finished_at IS NOT NULL AND started_at IS NULL AND attempts = 0 AND claimed_by IS NULL
	FROM airlock.executions WHERE id = :f),
  'refused with the reason, no attempt counted');
SELECT ok((SELECT from_state = 'running' AND to_state = 'refused' AND (detail->>'not_sent')::boolean
	AND NOT detail ? 'unreachable'
	FROM airlock.execution_events WHERE execution_id = :f ORDER BY id DESC LIMIT 1),
  'the event says running -> refused, not sent');
SELECT alike((SELECT airlock.get_execution(:f)->>'next_step'), 'Refused before anything ran: run on lxc:x blocked%',
  'the agent reads it as a refusal');

-- ------------------------------------------------------------ past the request's deadline
-- A read-only row's deadline is config_mutation's TTL, counted from its creation.
UPDATE airlock.gate_policy SET ttl = interval '1 second' WHERE class = 'config_mutation';
SET SESSION AUTHORIZATION n_worker;
SELECT id FROM airlock.worker_claim('w1', :l);
SELECT airlock.worker_classified(:l, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:l, 'w1', NULL, '{}', 'user');
SELECT pg_sleep(1.1);
SELECT is(airlock.worker_not_sent(:l, 'w1', 'node proxmox-host:hubris could not be reached', 1000),
  'refused', 'past the deadline: refused instead of retried');
RESET SESSION AUTHORIZATION;
SELECT alike((SELECT error FROM airlock.executions WHERE id = :l),
  'node proxmox-host:hubris could not be reached: still unreachable when the request''s deadline passed (%; 1 attempts since %). Nothing ran.',
  'the refusal names the outage, the deadline and the attempts');
SELECT is((SELECT attempts FROM airlock.executions WHERE id = :l), 1, 'the attempt is counted');

-- ------------------------------------------------------------ who may call it
SET SESSION AUTHORIZATION n_agent;
SELECT throws_ok(format($$ SELECT airlock.worker_not_sent(%s, 'w1', 'x', 1000) $$, :r), '42501', NULL,
  'an agent cannot hand a row back');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ an approved row goes back approved, announced once
CREATE ROLE n_op LOGIN IN ROLE airlock_operator;
SET SESSION AUTHORIZATION n_agent;
SELECT airlock.run('proxmox-host:hubris', 'systemctl restart nginx') AS a \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION n_worker;
SELECT id FROM airlock.worker_claim('w1', :a);
SELECT airlock.worker_classified(:a, 'w1', 'config_mutation', '[]', 1, 'test', 'none', false);
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION n_op;
SELECT airlock.approve(:a, 'go ahead');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION n_worker;
SELECT id FROM airlock.worker_claim('w1', :a);
SELECT airlock.worker_start(:a, 'w1', NULL, '{}', 'none');
SELECT is(airlock.worker_not_sent(:a, 'w1', 'node down before the command went out', 1000), 'approved',
  'an approved change whose command was never sent goes back approved');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.notifications WHERE execution_id = :a AND event = 'approved'),
  1::bigint, 'and its approval is announced once, not again when it goes back');

SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the chain and the records verify');

SELECT * FROM finish();
