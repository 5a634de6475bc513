-- outhold.sql -- output held for carrying secret material (migration 0028), with
-- pgTAP: what the worker records, what an agent reads (nothing of it, by any
-- function it may call), who may release or discard it (an agent gets
-- permission denied, like approve), the chained events of the hold and of
-- both decisions, the notification, and tampering found by audit_verify.
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory('{"entities": [{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1"}]}');
SELECT airlock.seed_policy('rules: []', 'output hold test', '[]');
CREATE ROLE h_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE h_other LOGIN IN ROLE airlock_agent;
CREATE ROLE h_worker LOGIN IN ROLE airlock_worker;
CREATE ROLE h_alice LOGIN IN ROLE airlock_operator;
CREATE ROLE h_bob LOGIN IN ROLE airlock_operator;
CREATE ROLE h_both LOGIN IN ROLE airlock_operator, airlock_agent;

-- The secret: a marker no other text in this file contains, so that a leak
-- of any byte-run of it is a match.
\set secret 'SECRETBYTES-7f3a9c'
\set out '''-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA SECRETBYTES-7f3a9c\n-----END OPENSSH PRIVATE KEY-----\n'''
\set err '''hunter2 on stderr SECRETBYTES-7f3a9c\n'''

SET SESSION AUTHORIZATION h_agent;
SELECT airlock.run('proxmox-host:hubris', 'cat /srv/key') AS k \gset
SELECT airlock.run('proxmox-host:hubris', 'cat /srv/key2') AS d \gset
SELECT airlock.run('proxmox-host:hubris', 'cat /srv/key3') AS x \gset
SELECT airlock.run('proxmox-host:hubris', 'uptime') AS u \gset
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ the worker holds
SET SESSION AUTHORIZATION h_worker;
SELECT id FROM airlock.worker_claim('w1', :k);
SELECT airlock.worker_classified(:k, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:k, 'w1', NULL, '{}', 'user');
SELECT throws_ok(format($$ SELECT airlock.worker_finish(%s, 'w1', 'succeeded', 0, NULL, 'x', 'y',
	false, false, 5, NULL, '{"kind": "Bad Kind", "label": "x", "stream": "stdout", "line": 1, "error_held": false}') $$, :k),
  'AL002', NULL, 'a malformed hold is refused');
SELECT is(airlock.worker_finish(:k, 'w1', 'succeeded', 0, NULL, convert_to(E:out, 'UTF8'),
	convert_to(E:err, 'UTF8'), false, false, 5, 'exit 0 SECRETBYTES-7f3a9c',
	'{"kind": "openssh_private_key", "label": "an OpenSSH private key", "stream": "stdout", "line": 1, "error_held": true}'),
  true, 'worker_finish records a held result');
SELECT throws_ok(format($$ SELECT stdout FROM airlock.output_holds WHERE execution_id = %s $$, :k), '42501', NULL,
  'the worker cannot read the held bytes');
SELECT is((SELECT kind || ' ' || state FROM airlock.output_holds WHERE execution_id = :k),
  'openssh_private_key held', 'the worker reads what a hold is about');
-- two more, to discard and to release while tampered
SELECT id FROM airlock.worker_claim('w1', :d);
SELECT airlock.worker_classified(:d, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:d, 'w1', NULL, '{}', 'user');
SELECT airlock.worker_finish(:d, 'w1', 'failed', 1, NULL, convert_to(E:out, 'UTF8'), ''::bytea, false, false, 5,
	NULL, '{"kind": "openssh_private_key", "label": "an OpenSSH private key", "stream": "stdout", "line": 1, "error_held": false}');
SELECT id FROM airlock.worker_claim('w1', :x);
SELECT airlock.worker_classified(:x, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:x, 'w1', NULL, '{}', 'user');
SELECT airlock.worker_finish(:x, 'w1', 'succeeded', 0, NULL, convert_to(E:out, 'UTF8'), ''::bytea, false, false, 5,
	NULL, '{"kind": "openssh_private_key", "label": "an OpenSSH private key", "stream": "stdout", "line": 1, "error_held": false}');
-- and one that carries nothing: no hold
SELECT id FROM airlock.worker_claim('w1', :u);
SELECT airlock.worker_classified(:u, 'w1', 'read_only', '[]', 1, 'test', 'none', false);
SELECT airlock.worker_start(:u, 'w1', NULL, '{}', 'user');
SELECT airlock.worker_finish(:u, 'w1', 'succeeded', 0, NULL, convert_to('up 3 days', 'UTF8'), ''::bytea,
	false, false, 5, NULL, NULL);
RESET SESSION AUTHORIZATION;

SELECT is((SELECT state || ' ' || exit_code || ' ' || (stdout IS NULL) || ' ' || (stderr IS NULL)
	FROM airlock.executions WHERE id = :k), 'succeeded 0 true true',
  'the request is final as it ran; its own stdout and stderr stay empty');
SELECT is((SELECT error FROM airlock.executions WHERE id = :k),
  'the error message is held with the output (see output_hold)', 'a held error is replaced on the row');
SELECT is((SELECT convert_from(stdout, 'UTF8') FROM airlock.output_holds WHERE execution_id = :k), E:out,
  'the held stdout is kept for operators, byte for byte');
SELECT is((SELECT error FROM airlock.output_holds WHERE execution_id = :k), 'exit 0 SECRETBYTES-7f3a9c',
  'and the held error');
SELECT is((SELECT stdout_sha256 FROM airlock.output_holds WHERE execution_id = :k),
  encode(sha256(convert_to(E:out, 'UTF8')), 'hex'), 'with its digest');
SELECT is((SELECT count(*)::int FROM airlock.output_holds WHERE execution_id = :u), 0,
  'harmless output holds nothing');
SELECT is((SELECT count(*)::int FROM airlock.notifications WHERE execution_id = :k AND event = 'output_held'), 1,
  'one output_held notification is queued');
SELECT ok((SELECT detail -> 'output_hold' ->> 'stdout_sha256' = encode(sha256(convert_to(E:out, 'UTF8')), 'hex')
	AND detail ->> 'error' = 'the error message is held with the output (see output_hold)'
	FROM airlock.execution_events WHERE execution_id = :k AND to_state = 'succeeded'),
  'the finish event chains the hold with the held output''s digest, never its bytes');

-- ------------------------------------------------------------ what an agent reads
SET SESSION AUTHORIZATION h_agent;
SELECT ok(strpos(airlock.get_execution(:k)::text, 'SECRETBYTES') = 0, 'get_execution carries no byte of it');
SELECT ok(strpos((SELECT string_agg(j::text, '') FROM airlock.list_executions(NULL, NULL, 50, NULL) j), 'SECRETBYTES') = 0,
  'list_executions neither');
SELECT is(airlock.get_execution(:k) -> 'output_hold' ->> 'state', 'held', 'get_execution shows the hold''s state');
SELECT is(airlock.get_execution(:k) -> 'output_hold' ->> 'message',
  'output held: it contains an OpenSSH private key at line 1 of stdout; an operator can release it.',
  'and says what it contains, where, and that an operator can release it');
SELECT matches(airlock.get_execution(:k) ->> 'next_step',
  '^Finished: succeeded, exit code 0\. output held: .* Ask your operator .* airlock output release ' || :k || ' .*Do not read it another way',
  'next_step says what to ask the operator, and not to go around airlock');
SELECT ok(NOT (airlock.get_execution(:k) ? 'stdout'), 'no stdout key while held');
SELECT throws_ok('SELECT * FROM airlock.output_holds', '42501', NULL, 'an agent cannot read the holds');
SELECT throws_ok('SELECT * FROM airlock.held_output', '42501', NULL, 'nor the held_output view');
SELECT throws_ok('SELECT * FROM airlock.history', '42501', NULL, 'nor the history');
SELECT throws_ok('SELECT * FROM airlock.execution_events', '42501', NULL, 'nor the events');
SELECT throws_ok('SELECT * FROM airlock.notifications', '42501', NULL, 'nor the notifications');
SELECT throws_ok(format('SELECT airlock.output_release(%s, %L)', :k, 'mine'), '42501', NULL,
  'an agent may not release: permission denied, like approve');
SELECT throws_ok(format('SELECT airlock.output_discard(%s, %L)', :k, 'mine'), '42501', NULL,
  'nor discard');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION h_other;
SELECT throws_ok(format('SELECT airlock.get_execution(%s)', :k), 'AL007', NULL, 'another agent does not see it at all');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ who may decide
SET SESSION AUTHORIZATION h_both;
SELECT throws_ok(format('SELECT airlock.output_release(%s, %L)', :k, 'x'), 'AL009', NULL,
  'a login that is also an agent may not release');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION h_alice;
SELECT throws_ok(format('SELECT airlock.output_release(%s, NULL)', :k), 'AL002', NULL, 'a reason is required');
SELECT throws_ok(format('SELECT airlock.output_release(%s, %L)', :u, 'x'), 'AL007', NULL,
  'a request without held output has nothing to release');
SELECT is((SELECT convert_from(stdout, 'UTF8') FROM airlock.output_holds WHERE execution_id = :k), E:out,
  'an operator reads the held output');
SELECT is((SELECT count(*)::int FROM airlock.held_output), 3, 'held_output lists what waits');

-- ------------------------------------------------------------ release
SELECT is(airlock.output_release(:k, 'a test key, checked'), 'released', 'alice releases it');
SELECT throws_ok(format('SELECT airlock.output_discard(%s, %L)', :k, 'late'), 'AL005', NULL,
  'a decided hold cannot be decided again');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state || ' ' || decided_by || ' ' || reason || ' ' || (stdout IS NULL) FROM airlock.output_holds
	WHERE execution_id = :k), 'released h_alice a test key, checked true',
  'the hold says who released it and why, and keeps no copy');
SET SESSION AUTHORIZATION h_agent;
SELECT is(airlock.get_execution(:k) ->> 'stdout', E:out, 'the agent reads the released stdout');
SELECT is(airlock.get_execution(:k) ->> 'error', 'exit 0 SECRETBYTES-7f3a9c', 'and the released error');
SELECT matches(airlock.get_execution(:k) ->> 'next_step', 'released by h_alice: a test key, checked\.$',
  'next_step says who released it');
RESET SESSION AUTHORIZATION;
SELECT ok((SELECT detail ->> 'step' = 'output_release' AND detail ->> 'by' = 'h_alice'
	AND detail -> 'output_hold' ->> 'state' = 'released' AND actor = 'h_alice'
	AND detail -> 'execution' ->> 'stdout_sha256' = encode(sha256(convert_to(E:out, 'UTF8')), 'hex')
	FROM airlock.execution_events WHERE execution_id = :k ORDER BY id DESC LIMIT 1),
  'the release is a chained event by alice, carrying the request''s new record');

-- ------------------------------------------------------------ discard
SET SESSION AUTHORIZATION h_bob;
SELECT is(airlock.output_discard(:d, 'not needed'), 'discarded', 'bob discards the other');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state || ' ' || (stdout IS NULL) || ' ' || stdout_bytes FROM airlock.output_holds WHERE execution_id = :d),
  'discarded true ' || octet_length(convert_to(E:out, 'UTF8')), 'its bytes are erased; their size stays');
SET SESSION AUTHORIZATION h_agent;
SELECT matches(airlock.get_execution(:d) ->> 'next_step', 'discarded by h_bob: not needed\. It will not be shown',
  'the agent reads that it was discarded, by whom and why');
SELECT ok(strpos(airlock.get_execution(:d)::text, 'SECRETBYTES') = 0, 'and no byte of it');
RESET SESSION AUTHORIZATION;
SELECT ok((SELECT detail ->> 'step' = 'output_discard' AND actor = 'h_bob'
	FROM airlock.execution_events WHERE execution_id = :d ORDER BY id DESC LIMIT 1),
  'the discard is a chained event by bob');

-- ------------------------------------------------------------ notification
SELECT ok(airlock.notify_expand('[{"name": "h", "url": "http://x"}]', 100) > 0, 'the outbox is expanded');
CREATE TEMP TABLE due AS SELECT * FROM airlock.notify_due(ARRAY['h'], 100, 30);
SELECT is((SELECT output_hold FROM due WHERE execution_id = :x AND event = 'output_held'),
  'output held: it contains an OpenSSH private key at line 1 of stdout; an operator can release it.',
  'the output_held delivery carries the hold''s sentence');
SELECT is((SELECT count(*)::int FROM due WHERE event = 'output_held'), 3, 'one output_held per hold');
SELECT is((SELECT count(*)::int FROM due WHERE strpos(due::text, 'SECRETBYTES') > 0 AND execution_id <> :k), 0,
  'no delivery carries a byte of held or discarded output (only the released one''s error is the request''s own now)');

-- ------------------------------------------------------------ a preview's held output
SET SESSION AUTHORIZATION h_worker;
SELECT lives_ok(format($$ SELECT airlock.worker_preview(%s, 1, 'cat /srv/aws', 0,
	'aws_access_key_id = AKIAABCDEFGHIJKLMNOP', '', false, NULL,
	'{"kind": "aws_access_key", "label": "an AWS access key", "stream": "stdout", "line": 1}') $$, :u),
  'worker_preview records a preview whose output is held');
SELECT throws_ok(format($$ SELECT airlock.worker_preview(%s, 2, 'x', 0, '', '', false, NULL, '[]') $$, :u),
  'AL002', NULL, 'a malformed preview hold is refused');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT hold ->> 'kind' FROM airlock.execution_previews WHERE execution_id = :u AND ord = 1),
  'aws_access_key', 'the preview is marked held, its output kept for operators');
SELECT ok((SELECT detail -> 'output_hold' ->> 'kind' = 'aws_access_key' AND NOT (detail -> 'output_hold' ? 'label')
	FROM airlock.execution_events WHERE execution_id = :u AND detail ->> 'step' = 'preview'),
  'its chained event says so');

-- ------------------------------------------------------------ audit
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the chain and every record agree');
SELECT throws_ok('DELETE FROM airlock.output_holds', '42501', NULL, 'a hold is never deleted');
ALTER TABLE airlock.output_holds DISABLE TRIGGER USER;
UPDATE airlock.output_holds SET state = 'released', decided_by = 'nobody', reason = 'forged'
	WHERE execution_id = :x;
SELECT matches((SELECT detail FROM airlock.audit_verify()), 'output hold of execution ' || :x || ' differs from its record',
  'a hold changed around the functions differs from its record');
UPDATE airlock.output_holds SET state = 'held', decided_by = NULL, reason = NULL WHERE execution_id = :x;
UPDATE airlock.output_holds SET stdout = convert_to('swapped', 'UTF8') WHERE execution_id = :x;
SELECT matches((SELECT detail FROM airlock.audit_verify()), 'output hold of execution ' || :x,
  'held bytes swapped after the hold no longer match their chained digest');
SELECT * FROM finish();
