-- gate.sql -- the hardened gate (migration 0004), attacked as each role (pgTAP):
-- who counts as an approver, look-alike attribute keys, flood limits, the
-- carry limit, approval validity and probed-state changes, gate policy rules.
-- Run by tests/suites/20-sql.sh on a freshly migrated throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory($$ {"entities": [
  {"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1", "port": 2222},
  {"slug": "proxmox-host:nyx", "type": "proxmox-host", "address": "127.0.0.2", "port": 2222},
  {"slug": "vm:web01", "type": "vm", "node": "proxmox-host:hubris", "vmid": 101,
   "attributes": {"qemu_guest_agent": "running"}},
  {"slug": "lxc:nfs-export", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 201,
   "attributes": {"container_status": "running"}},
  {"slug": "lxc:cache", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 202,
   "attributes": {"container_status": "running"}}]} $$);
SELECT airlock.seed_policy('rules: []', 'gate.sql', '[]');

CREATE ROLE ares LOGIN IN ROLE airlock_agent;
CREATE ROLE iris LOGIN IN ROLE airlock_agent;
CREATE ROLE ada LOGIN IN ROLE airlock_operator;
CREATE ROLE ben LOGIN IN ROLE airlock_operator;
CREATE ROLE dan LOGIN IN ROLE airlock_operator;
CREATE ROLE cleo LOGIN IN ROLE airlock_operator, airlock_agent;
CREATE ROLE root2 LOGIN SUPERUSER;
CREATE ROLE probe2 LOGIN IN ROLE airlock_scheduler;
GRANT USAGE ON SCHEMA public TO PUBLIC;

-- The worker's classification of one row, through the real worker functions.
CREATE FUNCTION pg_temp.hold(id bigint, cls text) RETURNS text LANGUAGE sql AS $$
	UPDATE airlock.executions SET claimed_by = 'w1' WHERE executions.id = hold.id;
	SELECT airlock.worker_classified(hold.id, 'w1', cls, '[]', 1, 'test', 'none', false);
$$;
-- Claims a row for the worker 'w1' (as worker_claim would) and re-validates it.
CREATE FUNCTION pg_temp.revalidate(id bigint, cls text) RETURNS text LANGUAGE sql AS $$
	UPDATE airlock.executions SET claimed_by = 'w1' WHERE executions.id = revalidate.id;
	SELECT airlock.worker_revalidate(revalidate.id, 'w1', cls, '[]', 1, 'test');
$$;
-- The SQLSTATE a statement raises, or 'ok'.
CREATE FUNCTION pg_temp.outcome(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE sql;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END
$$;

-- ============================================================ who counts as an approver
SET SESSION AUTHORIZATION ares;
SELECT is(airlock.run('proxmox-host:hubris', 'rm -rf /var/lib/vz/dump'), 1::bigint, 'ares asks for a destructive change');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.hold(1, 'destructive'), 'pending_approval', 'it waits for two approvers');
SET SESSION AUTHORIZATION ada;
SELECT is(airlock.approve(1, 'ok'), 'pending_approval', 'ada is the first vote');
RESET SESSION AUTHORIZATION;
SELECT throws_like($$ SELECT airlock.approve(1, 'second vote') $$,
  '%postgres is a superuser and never counts as an approver%', 'a superuser (the migrating administrator) is refused');
SELECT throws_ok($$ SELECT airlock.approve(1, 'second vote') $$, 'AL009', NULL, '... with its own SQLSTATE');
SET SESSION AUTHORIZATION root2;
SELECT throws_ok($$ SELECT airlock.approve(1) $$, 'AL009', NULL, 'any superuser login is refused');
SELECT throws_ok($$ SELECT airlock.reject(1, 'no') $$, 'AL009', NULL, 'a superuser cannot reject either');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION cleo;
SELECT throws_like($$ SELECT airlock.approve(1) $$, '%cleo is a member of airlock_agent%',
  'a login that is operator and agent is refused');
SELECT throws_ok($$ SELECT airlock.reject(1, 'no') $$, 'AL009', NULL, '... and cannot reject');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state FROM airlock.executions WHERE id = 1), 'pending_approval', 'the row still waits');
SELECT is((SELECT approvals FROM airlock.pending WHERE id = 1), 1::bigint, 'one vote counts');
SELECT is((SELECT count(*) FROM airlock.approvals WHERE execution_id = 1), 1::bigint, 'no refused vote was recorded');
-- A vote written around approve() (as a superuser could) does not count.
INSERT INTO airlock.approvals (execution_id, approver, decision, payload_hash)
SELECT 1, 'postgres', 'approve', payload_hash FROM airlock.executions WHERE id = 1;
INSERT INTO airlock.approvals (execution_id, approver, decision, payload_hash)
SELECT 1, 'cleo', 'approve', payload_hash FROM airlock.executions WHERE id = 1;
SELECT is((SELECT approvals FROM airlock.pending WHERE id = 1), 1::bigint,
  'forged votes by a superuser and an agent member do not count in the pending view');
-- A vote given by an operator who later became an agent stops counting.
SET SESSION AUTHORIZATION dan;
SELECT is(airlock.approve(1), 'approved', 'dan completes the quorum');
RESET SESSION AUTHORIZATION;
GRANT airlock_agent TO dan;
SELECT is(pg_temp.revalidate(1, 'destructive'), 'pending_approval',
  'once dan is also an agent, his vote no longer counts: re-validation voids the approval');
SELECT ok((SELECT detail ->> 'why' FROM airlock.execution_events WHERE execution_id = 1 ORDER BY id DESC LIMIT 1)
  LIKE 'only 1 of 2 approvals still count%', 'the event says why');
REVOKE airlock_agent FROM dan;
-- ... and if his role changes after re-validation, the row still cannot start.
SET SESSION AUTHORIZATION ben;
SELECT is(airlock.approve(1), 'approved', 'ben approves: quorum again');
RESET SESSION AUTHORIZATION;
UPDATE airlock.executions SET claimed_by = 'w1' WHERE id = 1;
GRANT airlock_agent TO dan, ben;
SELECT throws_like($$ SELECT airlock.worker_start(1, 'w1', '[]', '{}') $$, '%only 1 of 2 approvals count%',
  'a row whose votes no longer make the quorum cannot start, even past re-validation');
REVOKE airlock_agent FROM dan, ben;
UPDATE airlock.executions SET claimed_by = NULL WHERE id = 1;
-- Self-approval is still its own refusal for a real operator.
SET SESSION AUTHORIZATION ada;
SELECT is(airlock.run('proxmox-host:hubris', 'systemctl restart pveproxy'), 2::bigint, 'an operator asks');
RESET SESSION AUTHORIZATION;
SELECT pg_temp.hold(2, 'config_mutation');
SET SESSION AUTHORIZATION ada;
SELECT throws_ok($$ SELECT airlock.approve(2) $$, 'AL006', NULL, 'an operator cannot approve their own request');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION ben;
SELECT is(airlock.reject(2, 'not now'), 'rejected', 'a real operator rejects');
RESET SESSION AUTHORIZATION;

-- ============================================================ look-alike attribute keys
SET SESSION AUTHORIZATION ares;
SELECT is(airlock.update_entity_attributes('vm:web01', '{"owner": "team-a", "  Rack  ": "r1"}') -> 'merged',
  '["Rack", "owner"]'::jsonb, 'ordinary keys are merged, trimmed');
SELECT is(jsonb_array_length(airlock.update_entity_attributes('vm:web01',
  jsonb_build_object('Health', 'ok', 'health ', 'ok', 'HEALTH', 'ok', U&'\FF48\FF45\FF41\FF4C\FF54\FF48', 'ok',
    'Qemu-Guest-Agent', 'running', 'container status', 'running', 'last.probe', 'now', 'hea1th', 'x',
    U&'\+01D421\+01D41E\+01D41A\+01D425\+01D42D\+01D421', 'ok')) -> 'dropped'), 9,
  'Health, "health ", HEALTH, fullwidth, math bold, separators, digit look-alikes: all dropped as scheduler-owned');
SELECT ok(airlock.update_entity_attributes('vm:web01', '{"Health": "ok"}') -> 'dropped' -> 0 ->> 'reason'
  LIKE '"Health" is the scheduler-owned key "health" once normalised%', 'the reason names the key it imitates');
SELECT throws_like($$ SELECT airlock.update_entity_attributes('vm:web01', jsonb_build_object(U&'h\0435alth', 'ok')) $$,
  '%not plain ASCII after NFKC normalisation (U+0435 at character 2)%', 'a Cyrillic look-alike is refused, naming the code point');
SELECT throws_ok($$ SELECT airlock.update_entity_attributes('vm:web01', jsonb_build_object(U&'hea\200Blth', 'ok')) $$,
  'AL002', NULL, 'a zero-width space is refused');
SELECT throws_like($$ SELECT airlock.update_entity_attributes('vm:web01', jsonb_build_object(U&'owner\202E', 'ok', 'fine', 1)) $$,
  '%control or invisible character (U+202E at character 6)%', 'a bidi override is refused, naming it');
SELECT throws_ok($$ SELECT airlock.update_entity_attributes('vm:web01', jsonb_build_object(E'he\x1b[2Kalth', 'ok')) $$,
  'AL002', NULL, 'an escape sequence is refused');
SELECT throws_ok($$ SELECT airlock.update_entity_attributes('vm:web01', '{"team": 1, "team ": 2}') $$,
  'AL002', NULL, 'two keys that normalise to one are refused');
SELECT throws_ok($$ SELECT airlock.update_entity_attributes('vm:web01', '{"   ": 1}') $$, 'AL002', NULL, 'a blank key is refused');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT attributes FROM airlock.entities WHERE slug = 'vm:web01'),
  '{"Rack": "r1", "owner": "team-a", "qemu_guest_agent": "running"}'::jsonb,
  'nothing but the ordinary keys was ever written');

-- Generated variants of every scheduler-owned key, per category: none may be
-- stored as an ordinary key.  Each variant either is dropped (it normalises to
-- the key) or refused (invisible characters, non-ASCII look-alike letters).
CREATE TABLE pg_temp.variants (category text, key text);
INSERT INTO pg_temp.variants
SELECT c, v FROM airlock.scheduler_keys s, LATERAL (VALUES
	('case', upper(s.key)), ('case', initcap(s.key)),
	('case', (SELECT string_agg(CASE WHEN i % 2 = 0 THEN upper(ch) ELSE ch END, '' ORDER BY i)
		  FROM regexp_split_to_table(s.key, '') WITH ORDINALITY t(ch, i))),
	('spaces', ' ' || s.key), ('spaces', s.key || '   '), ('spaces', U&'\3000' || s.key || U&'\00A0'),
	('separators', replace(s.key, '_', '-')), ('separators', replace(s.key, '_', '.')),
	('separators', replace(s.key, '_', ' ')), ('separators', replace(s.key, '_', '')),
	('fullwidth', translate(s.key, 'abcdefghijklmnopqrstuvwxyz_',
		U&'\FF41\FF42\FF43\FF44\FF45\FF46\FF47\FF48\FF49\FF4A\FF4B\FF4C\FF4D\FF4E\FF4F\FF50\FF51\FF52\FF53\FF54\FF55\FF56\FF57\FF58\FF59\FF5A\FF3F')),
	('digits', translate(s.key, 'ol', '01')), ('symbols', translate(s.key, 'sal', '$@!')),
	('digits', translate(s.key, 'sl', '5|')), ('long-s', translate(s.key, 's', U&'\017F')),
	('letterlike', translate(s.key, 'hk', U&'\210E\212A')), ('circled', translate(s.key, 'aeh', U&'\24D0\24D4\24D7')),
	('cyrillic', translate(s.key, 'aceopxy', U&'\0430\0441\0435\043E\0440\0445\0443')),
	('greek', translate(s.key, 'aeiknoptuvxy', U&'\03B1\03B5\03B9\03BA\03B7\03BF\03C1\03C4\03C5\03BD\03C7\03B3')),
	('combining', regexp_replace(s.key, '([aeiou])', '\1' || U&'\0301', 'g')),
	('invisible-zw', overlay(s.key placing U&'\200B' from 2 for 0)),
	('invisible-zwj', s.key || U&'\200D'), ('invisible-bom', U&'\FEFF' || s.key),
	('invisible-bidi', U&'\202E' || s.key), ('invisible-tag', s.key || U&'\+0E0041'),
	('invisible-soft-hyphen', overlay(s.key placing U&'\00AD' from 3 for 0)),
	('control', s.key || E'\r'), ('control', E'\x1b]0;' || s.key)) x(c, v)
WHERE v <> s.key;
SELECT is((SELECT count(*) FROM pg_temp.variants WHERE key = ANY (SELECT key FROM airlock.scheduler_keys)), 0::bigint,
  'no generated variant is a scheduler key itself');
CREATE TABLE pg_temp.verdicts AS
SELECT v.category, v.key, pg_temp.outcome(format('SELECT 1 FROM airlock.update_entity_attributes(%L, %L) r WHERE r -> ''merged'' <> ''[]''',
	'lxc:cache', jsonb_build_object(v.key, 'forged'))) AS outcome
FROM pg_temp.variants v;
SELECT is((SELECT attributes FROM airlock.entities WHERE slug = 'lxc:cache'), '{"container_status": "running"}'::jsonb,
  format('none of %s generated look-alikes was stored', (SELECT count(*) FROM pg_temp.verdicts)));
SELECT is((SELECT string_agg(DISTINCT category, ',') FROM pg_temp.verdicts WHERE category LIKE 'invisible%' OR category = 'control'
           HAVING bool_and(outcome = 'AL002')), 'control,invisible-bidi,invisible-bom,invisible-soft-hyphen,invisible-tag,invisible-zw,invisible-zwj',
  'every invisible or control variant is refused with AL002');
SELECT is((SELECT count(*) FROM pg_temp.verdicts WHERE category IN ('cyrillic', 'greek', 'combining') AND outcome <> 'AL002'), 0::bigint,
  'every variant with look-alike letters from another script is refused');

-- ============================================================ flood limits (defaults)
SELECT is((SELECT requests_per_minute FROM airlock.gate_limits), 60, 'the default is 60 requests per agent per minute');
-- Without a row of its own the gate still has limits: the defaults.
CREATE TEMP TABLE saved_limits AS SELECT * FROM airlock.gate_limits;
DELETE FROM airlock.gate_limits;
SELECT is(airlock._limits(), ROW(true, 60, 100, 65536, 256, 256, NULL)::airlock.gate_limits,
  'with no row in gate_limits, the limits are the defaults');
INSERT INTO airlock.gate_limits SELECT * FROM saved_limits;
SELECT is(airlock._limits(), (SELECT l FROM airlock.gate_limits l), 'with its row back, the limits are the row');
SELECT is(airlock._limits_apply(), false, 'a superuser is not held to the flood limits');
SET SESSION AUTHORIZATION iris;
SELECT throws_like($$ SELECT airlock.run('proxmox-host:hubris', 'echo ' || g) FROM generate_series(1, 500) g $$,
  '%iris already made 60 requests in the last minute; the gate policy allows 60 per minute (requests_per_minute)%',
  '500 run() calls in one statement: refused at the limit, naming it');
SELECT throws_ok($$ SELECT airlock.run('proxmox-host:hubris', 'echo ' || g) FROM generate_series(1, 500) g $$,
  'AL010', NULL, '... with its own SQLSTATE');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.executions WHERE requested_by = 'iris'), 0::bigint, 'nothing of it was written');
SELECT is((SELECT count(*) FROM airlock.execution_events e JOIN airlock.executions x ON x.id = e.execution_id
           WHERE x.requested_by = 'iris'), 0::bigint, 'no event either');
SET SESSION AUTHORIZATION iris;
SELECT is((SELECT count(*) FROM (SELECT airlock.run('proxmox-host:hubris', 'echo ' || g) FROM generate_series(1, 60) g) x),
  60::bigint, '60 requests in one statement are accepted');
SELECT throws_ok($$ SELECT airlock.run('proxmox-host:hubris', 'echo 61') $$, 'AL010', NULL, 'the 61st within the minute is refused');
RESET SESSION AUTHORIZATION;
-- A minute later, with a backlog of 100 open requests (40 older ones added by hand).
UPDATE airlock.executions SET created_at = now() - interval '2 minutes' WHERE requested_by = 'iris';
INSERT INTO airlock.executions (target, target_type, command, requested_by, state, created_at)
SELECT 'proxmox-host:hubris', 'proxmox-host', 'echo old ' || g, 'iris', 'pending_approval', now() - interval '1 hour'
FROM generate_series(1, 40) g;
SET SESSION AUTHORIZATION iris;
SELECT throws_like($$ SELECT airlock.run('proxmox-host:hubris', 'echo 101') $$,
  '%iris already has 100 requests waiting to run or to be decided; the gate policy allows 100 (pending_per_agent)%',
  'over 100 open requests: refused, naming the limit');
SELECT is(airlock.cancel(id), 'cancelled', 'the agent cancels one') FROM airlock.list_executions('received', NULL, 1) r, LATERAL (SELECT (r ->> 'id')::bigint AS id) x;
SELECT ok(airlock.run('proxmox-host:hubris', 'echo 100') > 0, 'then it may ask again');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM (SELECT airlock.run('proxmox-host:hubris', 'echo bulk ' || g) FROM generate_series(1, 500) g) x),
  500::bigint, 'a superuser''s bulk load is not limited');
SET SESSION AUTHORIZATION ares;
SELECT throws_like($$ SELECT airlock.update_entity_attributes('vm:web01', jsonb_build_object('blob', repeat('x', 100 * 1024 * 1024))) $$,
  '%attributes document is % bytes; the gate policy allows 65536 (attribute_bytes)%', 'a 100 MiB attribute payload is refused');
SELECT throws_ok($$ SELECT airlock.update_entity_attributes('vm:web01', (SELECT jsonb_object_agg('k' || g, g) FROM generate_series(1, 300) g)) $$,
  'AL010', NULL, 'more keys than attribute_keys are refused');
SELECT lives_ok($$ SELECT airlock.update_entity_attributes('vm:web01', (SELECT jsonb_object_agg('k' || g, g) FROM generate_series(1, 250) g)) $$,
  '250 keys fit');
SELECT throws_like($$ SELECT airlock.update_entity_attributes('vm:web01', '{"k251": 1, "k252": 2, "k253": 3, "k254": 4}') $$,
  '%would have 257 attribute keys%', 'the limit counts the merged document');
SELECT throws_like($$ SELECT airlock.update_entity_attributes('vm:web01', jsonb_build_object('note', repeat('y', 64000))) $$,
  '%would have an attributes document of%', 'the size limit holds for the merged document too');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM jsonb_object_keys((SELECT attributes FROM airlock.entities WHERE slug = 'vm:web01'))), 253::bigint,
  'only the accepted 250 keys were added');

-- ============================================================ the carry limit
SET SESSION AUTHORIZATION ares;
SELECT throws_like($$ SELECT airlock.run('proxmox-host:hubris', 'echo ' || repeat('''', 9000)) $$,
  '%command is too long to carry: 36007 bytes once quoted%the limit is 32640%', 'many quotes: refused at the door, naming the limit');
SELECT throws_ok($$ SELECT airlock.run('proxmox-host:hubris', repeat('x', 32639)) $$, 'AL002', NULL, 'one byte over the limit');
RESET SESSION AUTHORIZATION;

-- ============================================================ approval validity
SELECT is((SELECT approval_valid_for FROM airlock.gate_policy WHERE class = 'config_mutation'), interval '15 minutes',
  'approvals hold 15 minutes by default');
SET SESSION AUTHORIZATION ares;
SELECT airlock.run('lxc:nfs-export', 'exportfs -ra') AS a1 \gset
SELECT airlock.run('lxc:nfs-export', 'exportfs -ua') AS a2 \gset
SELECT airlock.run('vm:web01', 'systemctl restart nginx') AS a3 \gset
SELECT airlock.run('lxc:cache', 'systemctl restart redis') AS a4 \gset
RESET SESSION AUTHORIZATION;
SELECT pg_temp.hold(id, 'config_mutation') FROM unnest(ARRAY[:a1, :a2, :a3, :a4]::bigint[]) id;
SET SESSION AUTHORIZATION ben;
SELECT is(airlock.approve(id), 'approved', 'approved ' || id) FROM unnest(ARRAY[:a1, :a2, :a3, :a4]::bigint[]) id;
RESET SESSION AUTHORIZATION;
SELECT ok((SELECT approval_valid_until BETWEEN decided_at + interval '15 minutes' - interval '1 second'
                                           AND decided_at + interval '15 minutes' FROM airlock.executions WHERE id = :a1),
  'the approval is valid for approval_valid_for from the decision');
SELECT ok(airlock._next_step(e) LIKE 'Approved; it will run shortly. The approval holds until %; if it has not started by then, it expires.%',
  'the agent is told how long the approval holds') FROM airlock.executions e WHERE id = :a1;
SELECT is((SELECT approved_probe FROM airlock.executions WHERE id = :a1), '{"container_status": "running"}'::jsonb,
  'the probed state at approval is recorded');
-- The first lapses while no worker holds it: the expiry timer settles it.
UPDATE airlock.executions SET approval_valid_until = now() - interval '1 second' WHERE id = :a1;
SELECT is(airlock.expire_pending(), 1, 'expire_pending expires an approved row whose approval lapsed');
SELECT is((SELECT state FROM airlock.executions WHERE id = :a1), 'expired', 'it is expired');
SELECT ok(airlock._next_step(e) LIKE 'Approved, but it did not start in time: the approval given at % lapsed at % before the command started (approval_valid_for); nothing ran.%',
  'the agent is told why, and that nothing ran') FROM airlock.executions e WHERE id = :a1;
SELECT is((SELECT detail ->> 'approval_lapsed' FROM airlock.execution_events WHERE execution_id = :a1 ORDER BY id DESC LIMIT 1),
  'true', 'the event records the lapse');
-- The second lapses while a worker picks it up: re-validation expires it.
UPDATE airlock.executions SET approval_valid_until = now() - interval '1 second' WHERE id = :a2;
SELECT is(pg_temp.revalidate(:a2, 'config_mutation'), 'expired', 're-validation expires a lapsed approval');
SELECT is((SELECT claimed_by FROM airlock.executions WHERE id = :a2), NULL, 'and lets go of the row');
-- The backstop: a lapsed approval never starts, whoever tries.
UPDATE airlock.executions SET claimed_by = 'w1', approval_valid_until = now() - interval '1 second' WHERE id = :a4;
SELECT throws_like('SELECT airlock.worker_start(' || :a4 || $$, 'w1', '[]', '{}')$$, '%approval lapsed%',
  'worker_start refuses to start a row whose approval lapsed');
UPDATE airlock.executions SET claimed_by = NULL, approval_valid_until = now() + interval '1 hour' WHERE id = :a4;

-- The target's probed state changes after approval.
SET SESSION AUTHORIZATION probe2;
SELECT airlock.record_probe('vm:web01', '{"qemu_guest_agent": "not_running"}');
SELECT airlock.record_probe('lxc:cache', '{"container_status": "unknown"}');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.revalidate(:a3, 'config_mutation'), 'refused', 'the guest agent went away after approval: refused');
SELECT ok((SELECT error FROM airlock.executions WHERE id = :a3)
  LIKE 'run on vm:web01 blocked: QEMU guest agent is not running (qm guest exec unavailable).%nothing ran.',
  'with the pre-flight''s words');
SELECT is(pg_temp.revalidate(:a4, 'config_mutation'), 'pending_approval',
  'the container''s probed status changed (still runnable): the approval is void, a human looks again');
SELECT ok((SELECT detail ->> 'why' FROM airlock.execution_events WHERE execution_id = :a4 ORDER BY id DESC LIMIT 1)
  = 'the target''s probed state changed since the approval (container_status: "running" -> "unknown")', 'the event says what changed');
SELECT is((SELECT approval_valid_until FROM airlock.executions WHERE id = :a4), NULL, 'the old approval''s validity is gone');

-- ============================================================ gate policy rules and versions
SELECT is(airlock.seed_gate('test v2', 'gate.sql', $$ {
  "classes": {"config_mutation": {"quorum": 1, "ttl_s": 3600, "approval_valid_for_s": 600},
              "destructive": {"quorum": 1, "ttl_s": 1800, "approval_valid_for_s": 300}},
  "rules": [{"target": "proxmox-host:*", "class": "config_mutation", "quorum": 2},
            {"agent": "iris", "quorum": 3, "ttl_s": 60}],
  "limits": {"requests_per_minute": 1000, "pending_per_agent": 1000, "attribute_bytes": 65536,
             "attribute_keys": 256, "relationships_per_entity": 3}} $$), 2::bigint, 'a gate policy becomes version 2');
SELECT is(airlock.seed_gate('test v2', 'gate.sql', '{}'), 2::bigint, 'the same source changes nothing');
SELECT is((SELECT count(*) FROM airlock.gate_policies), 2::bigint, 'every version is kept');
SELECT throws_ok($$ SELECT airlock.seed_gate('bad', 'gate.sql', '{"classes": {"destructive": {"quorum": 0, "ttl_s": 1, "approval_valid_for_s": 1}}, "limits": {}, "rules": []}') $$,
  'AL002', NULL, 'a bad document is refused by the database too');
SELECT is((SELECT max(version) FROM airlock.gate_policies), 2::bigint, '... and nothing of it stays');
SET SESSION AUTHORIZATION ares;
SELECT airlock.run('proxmox-host:hubris', 'apt-get install -y nfs-kernel-server') AS host_id \gset
RESET SESSION AUTHORIZATION;
SELECT airlock.record_probe('vm:web01', '{"qemu_guest_agent": "running"}');
SET SESSION AUTHORIZATION ares;
SELECT airlock.run('vm:web01', 'systemctl restart nginx') AS vm_id \gset
SELECT airlock.run('proxmox-host:hubris', 'rm -rf /tmp/x') AS destr_id \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION iris;
SELECT airlock.run('proxmox-host:nyx', 'reboot') AS athena_id \gset
RESET SESSION AUTHORIZATION;
SELECT pg_temp.hold(:host_id, 'config_mutation'), pg_temp.hold(:vm_id, 'config_mutation'),
       pg_temp.hold(:destr_id, 'destructive'), pg_temp.hold(:athena_id, 'destructive');
SELECT is((SELECT approvals_required FROM airlock.executions WHERE id = :host_id), 2,
  'proxmox-host:* config_mutation needs 2 under the rule');
SELECT is((SELECT approvals_required FROM airlock.executions WHERE id = :vm_id), 1, 'a VM''s config_mutation needs 1');
SELECT is((SELECT approvals_required FROM airlock.executions WHERE id = :destr_id), 1, 'destructive set explicitly to 1 is 1');
SELECT is((SELECT approvals_required || ' ' || (expires_at - classified_at < interval '61 seconds')
           FROM airlock.executions WHERE id = :athena_id), '3 true', 'a per-agent rule raises quorum and shortens the TTL');
SELECT is((SELECT gate_version FROM airlock.executions WHERE id = :host_id), 2::bigint, 'the row records the gate version that held it');
SET SESSION AUTHORIZATION ada;
SELECT is(airlock.approve(:host_id), 'pending_approval', 'the first vote on the host change');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT gate_version FROM airlock.approvals WHERE execution_id = :host_id), 2::bigint, 'the vote records the gate version');
SELECT is((SELECT (detail ->> 'gate_version')::bigint FROM airlock.execution_events WHERE execution_id = :host_id ORDER BY id DESC LIMIT 1),
  2::bigint, 'and so does its event');
-- relationships_per_entity is 3 now
SET SESSION AUTHORIZATION ares;
SELECT lives_ok($$ SELECT airlock.create_relationship('vm:web01', s, 'depends-on')
                   FROM unnest(ARRAY['lxc:nfs-export', 'lxc:cache', 'proxmox-host:nyx']) s $$, 'three relationships fit');
SELECT throws_like($$ SELECT airlock.create_relationship('proxmox-host:hubris', 'vm:web01', 'runs') $$,
  '%vm:web01 already has 3 relationships; the gate policy allows 3 per entity (relationships_per_entity)%', 'a fourth is refused');
SELECT is(airlock.create_relationship('vm:web01', 'lxc:cache', 'depends-on') ->> 'created', 'false',
  'recording an existing one again is still idempotent');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.relationships), 3::bigint, 'nothing over the limit was written');

-- ============================================================ notifications say nothing
SELECT is((SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'airlock' AND p.prosrc ~ 'pg_notify\(''airlock_(state|work|pending)'', [^'']'), 0::bigint,
  'no function sends a payload on airlock_state, airlock_work or airlock_pending');

-- ============================================================ ownership
SELECT is((SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'airlock' AND has_function_privilege('public', p.oid, 'EXECUTE')), 0::bigint,
  'PUBLIC may execute no airlock function (0004 included)');
SELECT is((SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'airlock' AND c.relkind IN ('r', 'v') AND c.relname <> 'schema_migrations'
             AND pg_get_userbyid(c.relowner) <> 'airlock_owner'), 0::bigint, 'every table and view belongs to airlock_owner');
SET SESSION AUTHORIZATION ares;
SELECT throws_ok($$ SELECT airlock.seed_gate('x', 'y', '{}') $$, '42501', NULL, 'an agent cannot seed the gate');
SELECT throws_ok($$ SELECT * FROM airlock.gate_rules $$, '42501', NULL, 'an agent cannot read the per-agent rules');
SELECT lives_ok($$ SELECT * FROM airlock.gate_limits $$, 'an agent may read the limits it is held to');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION ada;
SELECT lives_ok($$ SELECT * FROM airlock.pending $$, 'an operator reads the pending view');
RESET SESSION AUTHORIZATION;

SELECT * FROM finish();
