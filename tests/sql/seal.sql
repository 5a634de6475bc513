-- seal.sql -- events are written unsealed and sealed into the chain by the
-- sealer; the one UPDATE the append-only rules allow is a correct seal, for
-- every role (pgTAP).  Run by tests/suites/20-sql.sh on a fresh database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory($$ {"entities": [
  {"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1", "port": 2222}]} $$);
CREATE ROLE s_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE s_op LOGIN IN ROLE airlock_operator;
CREATE ROLE s_worker LOGIN IN ROLE airlock_worker;

-- The hash an event must carry, written out here from the documented formula.
CREATE FUNCTION pg_temp.want(e airlock.execution_events, prev text) RETURNS text LANGUAGE sql AS $$
	SELECT encode(sha256(convert_to(prev || '|' || e.id || '|' || e.execution_id || '|' ||
		to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' || e.actor || '|' ||
		coalesce(e.from_state, '') || '|' || e.to_state || '|' || e.detail::text, 'UTF8')), 'hex')
$$;
-- The newest sealed event's position and hash.
CREATE FUNCTION pg_temp.head() RETURNS airlock.execution_events LANGUAGE sql AS $$
	SELECT * FROM airlock.execution_events WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1
$$;

-- ------------------------------------------------------------ written unsealed
SET SESSION AUTHORIZATION s_agent;
SELECT airlock.run('proxmox-host:hubris', 'uptime') AS r1 \gset
SELECT airlock.run('proxmox-host:hubris', 'df -h') AS r2 \gset
SELECT count(airlock.run('proxmox-host:hubris', 'echo ' || g)) FROM generate_series(1, 4) g \g /dev/null
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL AND prev_hash IS NULL AND hash IS NULL),
  (SELECT count(*) FROM airlock.execution_events), 'every new event is written unsealed: no position, no link, no hash');
SELECT cmp_ok((SELECT count(*) FROM airlock.execution_events), '>=', 6::bigint, 'the six runs wrote their events');
SELECT is((SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 74287730), 0::bigint,
  'writing an event takes no chain lock');
SELECT throws_ok(format($$ INSERT INTO airlock.execution_events (execution_id, actor, to_state, seq, prev_hash, hash)
  VALUES (%s, 'forger', 'succeeded', 999, repeat('0', 64), repeat('a', 64)) $$, :r1), '42501',
  'execution_events: an event is inserted unsealed (no seq, prev_hash or hash); the sealer chains it',
  'an insert cannot carry a seal of its own, even from a superuser');
SELECT throws_ok(format($$ INSERT INTO airlock.execution_events (execution_id, actor, to_state, hash)
  VALUES (%s, 'forger', 'succeeded', repeat('a', 64)) $$, :r1), '42501', NULL, 'nor any part of one');
SELECT is((SELECT count(*) FROM airlock.execution_events WHERE actor = 'forger'), 0::bigint, 'nothing of them was written');
INSERT INTO airlock.execution_events (execution_id, actor, to_state) VALUES (:r1, 'plain', 'succeeded');
SELECT ok((SELECT id > 0 AND at IS NOT NULL AND seq IS NULL FROM airlock.execution_events WHERE actor = 'plain'),
  'a plain insert takes its id and time by default and is unsealed');
SET session_replication_role = replica;
DELETE FROM airlock.execution_events WHERE actor = 'plain';
RESET session_replication_role;
SET SESSION AUTHORIZATION s_op;
SELECT throws_ok($$ DELETE FROM airlock.executions $$, '42501', NULL, 'an operator cannot delete requests');
RESET SESSION AUTHORIZATION;
SELECT throws_ok($$ DELETE FROM airlock.executions WHERE false $$, '42501',
  'executions: a request is never deleted (DELETE is not allowed); its events and records refer to it',
  'nor can a superuser, even for no row');
SELECT throws_ok($$ TRUNCATE airlock.executions CASCADE $$, '42501', NULL, 'nor truncate them');

SET SESSION AUTHORIZATION s_op;
SELECT is((SELECT unsealed FROM airlock.audit_verify()), (SELECT count(*) FROM airlock.execution_events),
  'verify counts the unsealed tail');
SELECT ok((SELECT oldest_unsealed_s >= 0 FROM airlock.audit_verify()), 'and says how old its oldest event is');
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'an unsealed tail is not a broken chain');
SELECT is((SELECT checked FROM airlock.audit_verify()), 0::bigint, 'nothing is in the chain yet');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ who may seal
SET SESSION AUTHORIZATION s_agent;
SELECT throws_ok($$ SELECT airlock.seal_events(10) $$, '42501', NULL, 'an agent cannot run the sealer');
SELECT throws_ok($$ UPDATE airlock.execution_events SET seq = 1 $$, '42501', NULL, 'an agent cannot update events');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION s_op;
SELECT throws_ok($$ UPDATE airlock.execution_events SET actor = 'x' $$, '42501', NULL, 'an operator cannot update events');
SELECT throws_ok($$ SELECT airlock.seal_events(0) $$, 'AL002', 'seal_events: max must be between 1 and 100000, not 0',
  'a batch size of 0 is refused');
SELECT throws_ok($$ SELECT airlock.seal_events(NULL) $$, 'AL002', NULL, 'a NULL batch size is refused');
SELECT is(airlock.seal_events(2), 2, 'an operator may seal: two events, as asked');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT string_agg(seq::text, ' ' ORDER BY seq) FROM airlock.execution_events WHERE seq IS NOT NULL), '1 2',
  'the first seal starts the chain at position 1');
SELECT is((SELECT id FROM airlock.execution_events WHERE seq = 1), (SELECT min(id) FROM airlock.execution_events),
  'the oldest event is sealed first');
SELECT is((SELECT prev_hash FROM airlock.execution_events WHERE seq = 1), repeat('0', 64), 'position 1 links to 64 zeros');
SET SESSION AUTHORIZATION s_worker;
SELECT cmp_ok(airlock.seal_events(1000), '>=', 2, 'the worker seals the rest');
SELECT is(airlock.seal_events(1000), 0, 'then there is nothing left to seal');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL), 0::bigint, 'every event is sealed');
SELECT is((SELECT count(*) FROM airlock.execution_events e
           WHERE e.hash IS DISTINCT FROM pg_temp.want(e, (SELECT p.hash FROM airlock.execution_events p WHERE p.seq = e.seq - 1))
             AND e.seq > 1), 0::bigint, 'each hash covers the hash before it and the event''s content');
SELECT is((SELECT count(*) FROM airlock.execution_events e WHERE e.hash <> airlock._event_hash(e)), 0::bigint,
  'the sealer and _event_hash agree on every event');
SELECT is((SELECT max(seq) - min(seq) + 1 FROM airlock.execution_events), (SELECT count(*) FROM airlock.execution_events),
  'positions have no gaps');
SET SESSION AUTHORIZATION s_op;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the sealed chain verifies');
SELECT is((SELECT checked FROM airlock.audit_verify()), (SELECT count(*) FROM airlock.execution_events),
  'every event was checked');
SELECT is((SELECT unsealed FROM airlock.audit_verify()), 0::bigint, 'and none is left unsealed');
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ the door: a correct seal and nothing else
-- One more unsealed event to try it on.
SET SESSION AUTHORIZATION s_agent;
SELECT airlock.cancel(:r2);
RESET SESSION AUTHORIZATION;
SELECT min(id) AS u FROM airlock.execution_events WHERE seq IS NULL \gset
SELECT seq AS hs, hash AS hh FROM pg_temp.head() \gset
SET ROLE airlock_owner;
SELECT throws_ok(format($$ UPDATE airlock.execution_events SET actor = 'mallory' WHERE id = %s $$, :u), '42501',
  format('execution_events is append-only: UPDATE is not allowed (event %s is unsealed; the only change allowed is its seal: seq, prev_hash and hash together)', :u),
  'the owner cannot change an unsealed event''s content');
SELECT throws_ok(format($$ UPDATE airlock.execution_events e SET actor = 'mallory', seq = %s, prev_hash = %L,
    hash = pg_temp.want((SELECT x FROM airlock.execution_events x WHERE x.id = %s), %L) WHERE id = %s $$,
    :hs + 1, :'hh', :u, :'hh', :u), '42501',
  format('execution_events is append-only: UPDATE is not allowed (sealing event %s may not change its content)', :u),
  'the owner cannot change content while sealing');
SELECT throws_ok(format($$ UPDATE airlock.execution_events SET detail = '{"forged": true}', seq = %s, prev_hash = %L,
    hash = repeat('b', 64) WHERE id = %s $$, :hs + 1, :'hh', :u), '42501', NULL,
  'nor the detail');
SELECT throws_ok(format($$ UPDATE airlock.execution_events SET seq = %s, prev_hash = %L, hash = repeat('b', 64) WHERE id = %s $$,
    :hs + 1, :'hh', :u), '42501',
  format('execution_events: event %s cannot be sealed at chain position %s: its hash is not the hash of its content', :u, :hs + 1),
  'the owner cannot seal an event with a forged hash');
SELECT throws_ok(format($$ UPDATE airlock.execution_events e SET seq = %s, prev_hash = repeat('c', 64),
    hash = pg_temp.want(e, repeat('c', 64)) WHERE id = %s $$, :hs + 1, :u), '42501',
  format('execution_events: event %s cannot be sealed at chain position %s: its prev_hash is not the hash of the event at the position before it', :u, :hs + 1),
  'nor with a hash that is right for a forged link');
SELECT throws_ok(format($$ UPDATE airlock.execution_events e SET seq = %s, prev_hash = %L,
    hash = pg_temp.want(e, %L) WHERE id = %s $$, :hs + 5, :'hh', :'hh', :u), '42501', NULL,
  'nor at a position that leaves a hole');
SELECT throws_ok(format($$ UPDATE airlock.execution_events e SET seq = 1, prev_hash = repeat('0', 64),
    hash = pg_temp.want(e, repeat('0', 64)) WHERE id = %s $$, :u), '23505', NULL,
  'nor at a position another event holds');
SELECT throws_ok(format($$ UPDATE airlock.execution_events SET seq = %s WHERE id = %s $$, :hs + 1, :u), '42501', NULL,
  'a seal is all three columns or nothing');
SELECT throws_ok($$ UPDATE airlock.execution_events e SET prev_hash = e.prev_hash, hash = e.hash WHERE seq = 2 $$, '42501',
  format('execution_events is append-only: UPDATE is not allowed (event %s is sealed at chain position 2)',
         (SELECT id FROM airlock.execution_events WHERE seq = 2)),
  'a sealed event cannot be sealed again, even with the same values');
SELECT throws_ok($$ UPDATE airlock.execution_events SET seq = NULL, prev_hash = NULL, hash = NULL WHERE seq = 2 $$, '42501', NULL,
  'nor unsealed');
SELECT throws_ok($$ DELETE FROM airlock.execution_events WHERE seq IS NULL $$, '42501', NULL,
  'an unsealed event cannot be deleted');
SELECT lives_ok(format($$ UPDATE airlock.execution_events e SET seq = %s, prev_hash = %L, hash = pg_temp.want(e, %L) WHERE id = %s $$,
    :hs + 1, :'hh', :'hh', :u),
  'a correct seal is accepted whoever writes it: it is what the sealer would write');
RESET ROLE;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'the chain still verifies');
SELECT is((SELECT count(*) FROM airlock.execution_events WHERE actor = 'mallory' OR detail ? 'forged'), 0::bigint,
  'no refused attempt changed anything');

-- ------------------------------------------------------------ tampering as a superuser, triggers off
SET SESSION AUTHORIZATION s_agent;
SELECT airlock.run('proxmox-host:hubris', 'hostname') AS r3 \gset
RESET SESSION AUTHORIZATION;
SELECT airlock.seal_events(1000) AS n \gset
SELECT seq AS hs FROM pg_temp.head() \gset
-- an event left unsealed, for the forged seal below
INSERT INTO airlock.executions (target, target_type, command, requested_by, state)
VALUES ('proxmox-host:hubris', 'proxmox-host', 'true', 's_agent', 'received');
SELECT min(id) AS u FROM airlock.execution_events WHERE seq IS NULL \gset
SET session_replication_role = replica;
CREATE TEMP TABLE saved AS SELECT * FROM airlock.execution_events;
-- altered content
UPDATE airlock.execution_events SET detail = '{"reason": "forged"}' WHERE seq = 3;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), (SELECT id FROM saved WHERE seq = 3), 'an altered event is named');
UPDATE airlock.execution_events e SET detail = s.detail FROM saved s WHERE s.id = e.id AND e.seq = 3;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'restored, it verifies');
-- reordered: two events swap positions
UPDATE airlock.execution_events SET seq = -seq WHERE seq IN (4, 5);
UPDATE airlock.execution_events SET seq = CASE seq WHEN -4 THEN 5 ELSE 4 END WHERE seq IN (-4, -5);
SELECT is((SELECT first_broken FROM airlock.audit_verify()), (SELECT id FROM saved WHERE seq = 5),
  'two events that swapped positions are named');
UPDATE airlock.execution_events e SET seq = -s.seq FROM saved s WHERE s.id = e.id AND s.seq IN (4, 5);
UPDATE airlock.execution_events SET seq = -seq WHERE seq < 0;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'restored, it verifies');
-- removed
DELETE FROM airlock.execution_events WHERE seq = 6;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), (SELECT id FROM saved WHERE seq = 7),
  'a removed event breaks the link of the next, which is named');
SELECT alike((SELECT detail FROM airlock.audit_verify()), '%(chain position 7): prev_hash does not match%', 'by its position too');
INSERT INTO airlock.execution_events SELECT * FROM saved WHERE seq = 6;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'restored, it verifies');
-- a forged seal: an unsealed event sealed with a hash that is not its own
UPDATE airlock.execution_events SET seq = :hs + 1, prev_hash = (SELECT hash FROM pg_temp.head()), hash = repeat('d', 64)
WHERE id = :u;
SELECT is((SELECT first_broken FROM airlock.audit_verify()), :u::bigint, 'a forged seal is named');
SELECT alike((SELECT detail FROM airlock.audit_verify()), '%content does not match its hash%', 'as content that does not match');
RESET session_replication_role;
-- ------------------------------------------------------------ the sealer's scan
-- A bitmap scan of the unsealed index would visit every event sealed since
-- the last vacuum at every call (its dead entries are never marked).
SELECT ok((SELECT 'enable_bitmapscan=off' = ANY (proconfig) FROM pg_proc
           WHERE oid = 'airlock.seal_events(integer)'::regprocedure),
  'the sealer scans the unsealed events with a plain index scan, which steps over what it sealed before');

SELECT * FROM finish();
