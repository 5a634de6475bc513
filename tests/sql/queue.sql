-- queue.sql -- the queue's hot path as migration 0012 left it (pgTAP): the
-- records and hashes are the same to the byte as before, starting a row is
-- one statement with the same rules as confine-then-start.
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory('{"entities": [{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1"}]}');
SELECT airlock.seed_policy('rules: []', 'queue test', '[]');
CREATE ROLE q_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE q_worker LOGIN IN ROLE airlock_worker;

-- The forms that 0011 and 0001 wrote, as SQL functions, to compare with.
CREATE FUNCTION pg_temp.record_before(e airlock.executions) RETURNS jsonb LANGUAGE sql STABLE AS $$
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
	|| jsonb_build_object(
		'kind', e.kind, 'confinement', e.confinement, 'gate_version', e.gate_version,
		'approval_valid_until', to_char(e.approval_valid_until AT TIME ZONE 'UTC',
			'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		'approved_probe', e.approved_probe)
$$;
CREATE FUNCTION pg_temp.hash_before(e airlock.execution_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT encode(sha256(convert_to(
		e.prev_hash || '|' || e.id || '|' || e.execution_id || '|' ||
		to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' ||
		e.actor || '|' || coalesce(e.from_state, '') || '|' || e.to_state || '|' ||
		e.detail::text, 'UTF8')), 'hex')
$$;

-- Rows with every column set, unset, empty, odd bytes and odd text, in every state.
SET TimeZone = 'Pacific/Chatham';
INSERT INTO airlock.executions (target, target_type, command, requested_by, state, declared_risk,
	change_id, action, class, reasons, policy_version, payload_hash, approvals_required,
	rewind_status, rewind_possible, rewind_points, exit_code, signal, stdout, stderr,
	stdout_truncated, stderr_truncated, duration_ms, error, confinement, approval_valid_until)
SELECT 'proxmox-host:hubris', 'proxmox-host',
       CASE g % 4 WHEN 0 THEN 'echo ' || g WHEN 1 THEN E'printf "\u00e9\u200b\\t%s" ' || g
                  WHEN 2 THEN repeat('x', g * 7) ELSE E'ls \'/a b\'\n; true #' || g END,
       'q_bulk', (ARRAY['received', 'queued', 'pending_approval', 'running', 'succeeded', 'failed',
                         'refused', 'outcome_unknown'])[1 + g % 8],
       CASE WHEN g % 3 = 0 THEN NULL ELSE 'read_only' END,
       CASE WHEN g % 5 = 0 THEN 'CHG-' || g END, CASE WHEN g % 7 = 0 THEN E'act\u00f6' END,
       (ARRAY[NULL, 'read_only', 'reversible_low', 'config_mutation', 'destructive'])[1 + g % 5],
       CASE WHEN g % 2 = 0 THEN jsonb_build_array(jsonb_build_object('rule', 'r' || g, 'why', E'\u00fc' || g)) END,
       CASE WHEN g % 2 = 0 THEN 1 END, CASE WHEN g % 3 = 1 THEN md5(g::text) END,
       g % 3, CASE WHEN g % 4 = 2 THEN 'none' END, CASE g % 3 WHEN 0 THEN NULL WHEN 1 THEN true ELSE false END,
       CASE WHEN g % 6 = 0 THEN jsonb_build_array(g, 'cp-' || g) END,
       CASE WHEN g % 2 = 1 THEN g % 256 END, CASE WHEN g % 9 = 0 THEN 9 END,
       CASE WHEN g % 4 = 0 THEN NULL WHEN g % 4 = 1 THEN ''::bytea ELSE decode(md5(g::text) || '00ff', 'hex') END,
       CASE WHEN g % 5 = 0 THEN convert_to(E'err \u2603 ' || g, 'UTF8') END,
       g % 2 = 0, g % 3 = 0, CASE WHEN g % 2 = 0 THEN g * 1000 END,
       CASE WHEN g % 7 = 3 THEN E'went \'wrong\' ' || g END,
       (ARRAY[NULL, 'none', 'user', 'root'])[1 + g % 4],
       CASE WHEN g % 4 = 1 THEN '2026-12-01 10:00:00.123456+00'::timestamptz + g * interval '1 second' END
FROM generate_series(1, 200) g;
SELECT is((SELECT count(*) FROM airlock.executions e
           WHERE airlock._execution_record(e)::text IS DISTINCT FROM pg_temp.record_before(e)::text),
          0::bigint, 'the PL/pgSQL record is the SQL record to the byte, for 200 varied rows');
SELECT airlock.seal_events(100000) AS sealed \gset
SELECT is((SELECT count(*) FROM airlock.execution_events v WHERE airlock._event_hash(v) IS DISTINCT FROM pg_temp.hash_before(v)),
          0::bigint, 'the PL/pgSQL event hash is the SQL hash, for every event');
SELECT cmp_ok((SELECT count(*) FROM airlock.execution_events), '>=', 200::bigint,
          'those rows wrote their chained records');
-- The payload hash (PL/pgSQL since 0023) against 0002's SQL form, over
-- the same varied rows and every class, with a missing policy version too.
SELECT is((SELECT count(*) FROM airlock.executions e,
                unnest(ARRAY['read_only', 'reversible_low', 'config_mutation', 'destructive']) c,
                unnest(ARRAY[NULL, 0, 7, 9007199254740993]::bigint[]) v
           WHERE airlock._payload_hash(e.target, e.command, c, v) IS DISTINCT FROM
                 (SELECT encode(sha256(convert_to(e.target || E'\n' || c || E'\n' || v || E'\n'
                         || e.command, 'UTF8')), 'hex'))),
          0::bigint, 'the PL/pgSQL payload hash is the SQL one to the byte, for 3,200 inputs');
RESET TimeZone;

-- ------------------------------------------------------------ starting in one statement
SET SESSION AUTHORIZATION q_agent;
SELECT airlock.run('proxmox-host:hubris', 'uptime') AS ro \gset
SELECT airlock.run('proxmox-host:hubris', 'systemctl restart pveproxy') AS mut \gset
RESET SESSION AUTHORIZATION;
UPDATE airlock.executions SET run_after = now() + interval '1 hour'
WHERE state IN ('received', 'queued') AND id NOT IN (:ro, :mut);
SET SESSION AUTHORIZATION q_worker;
SELECT is((SELECT id FROM airlock.worker_claim('w1')), :ro::bigint, 'the observation is claimed');
SELECT is(airlock.worker_classified(:ro, 'w1', 'read_only', '[]', 1, 'test', 'none', false), 'queued',
  'and classified read_only: queued');
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w2', NULL, '{}', 'user') $$, :ro), 'AL005', NULL,
  'another worker cannot start it');
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', 'cell') $$, :ro), 'AL002',
  'worker_start: confinement "cell" is not none, user, root, write or action', 'an unknown confinement is refused');
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', 'action') $$, :ro), 'AL008',
  format('execution %s: only an unapproved reversible_low change runs as an action rule', :ro),
  'an observation may not run as an action rule');
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', NULL) $$, :ro), 'AL002', NULL,
  'no confinement is refused');
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', 'none') $$, :ro), 'AL008',
  format('execution %s: an observation that no human approved runs in the jail', :ro),
  'an observation nobody approved may not start unconfined');
SELECT is((SELECT state || '/' || coalesce(confinement, '-') FROM airlock.executions WHERE id = :ro),
  'queued/-', 'the refusals changed nothing');
SELECT max(id) AS before FROM airlock.execution_events \gset
SELECT lives_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{"provider": "none"}', 'user') $$, :ro),
  'confined in the user tier, it starts');
SELECT is((SELECT state || '/' || confinement FROM airlock.executions WHERE id = :ro), 'running/user',
  'running, confined as asked');
SELECT is((SELECT string_agg(to_state || ':' || coalesce(detail ->> 'confinement', detail -> 'execution' ->> 'confinement'), ' ' ORDER BY id)
           FROM airlock.execution_events WHERE id > :before),
  'record:user running:user', 'one record and one running event, both saying how it is confined');
SELECT is((SELECT id FROM airlock.worker_claim('w1')), :mut::bigint, 'the change is claimed');
SELECT is(airlock.worker_classified(:mut, 'w1', 'config_mutation', '[]', 1, 'test', 'none', false),
  'pending_approval', 'and held for approval');
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', 'none') $$, :mut), 'AL005', NULL,
  'a row held for approval cannot be started');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION q_agent;
SELECT airlock.run('proxmox-host:hubris', 'df -h') AS forged \gset
SET SESSION AUTHORIZATION q_worker;
SELECT is((SELECT id FROM airlock.worker_claim('w1')), :forged::bigint, 'a third row is claimed');
SELECT is(airlock.worker_classified(:forged, 'w1', 'read_only', '[]', 1, 'test', 'none', false), 'queued',
  'and queued as read_only');
RESET SESSION AUTHORIZATION;
UPDATE airlock.executions SET class = 'config_mutation' WHERE id = :forged;
SET SESSION AUTHORIZATION q_worker;
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', 'none') $$, :forged), 'AL008',
  format('execution %s: config_mutation needs approval', :forged),
  'a change nobody approved never starts, even queued');
RESET SESSION AUTHORIZATION;
UPDATE airlock.executions SET class = 'read_only' WHERE id = :forged;
SET SESSION AUTHORIZATION q_worker;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the chain and the records verify');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION q_agent;
SELECT throws_ok(format($$ SELECT airlock.worker_start(%s, 'w1', NULL, '{}', 'user') $$, :mut), '42501', NULL,
  'an agent cannot start a row');
RESET SESSION AUTHORIZATION;

SELECT * FROM finish();
