-- records.sql -- run(), the worker's claim and its finish carry the request's
-- record in their own transition event (migration 0026); every other change still
-- writes a record event, and verification finds a record wherever it sits
-- (pgTAP).  Run by tests/suites/20-sql.sh on a freshly migrated database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory('{"entities": [
	{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1", "port": 2222,
	 "ssh_user": "root", "host_key_fingerprint": "SHA256:abc"}]}');
SELECT airlock.seed_policy('rules: []', 'records test', '[]');
CREATE ROLE r_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE r_worker LOGIN IN ROLE airlock_worker;

CREATE FUNCTION pg_temp.seen(x bigint) RETURNS jsonb LANGUAGE sql SECURITY DEFINER AS $$
	SELECT airlock._wake_doc(e) FROM airlock.executions e WHERE e.id = x
$$;
GRANT EXECUTE ON FUNCTION pg_temp.seen(bigint) TO PUBLIC;
CREATE FUNCTION pg_temp.take(x bigint, cls text, conf text) RETURNS text LANGUAGE sql AS $$
	SELECT coalesce((SELECT c.state FROM airlock.worker_claim_classified('w1', x, pg_temp.seen(x), cls,
		'[{"rule": "r1"}]', 1, 'test', 'no rewind point possible', false, conf) c), '-')
$$;
GRANT EXECUTE ON FUNCTION pg_temp.take(bigint, text, text) TO PUBLIC;
-- An execution's events in order: from>to, with ":R" where one carries a record.
CREATE FUNCTION pg_temp.trail(x bigint) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(coalesce(from_state, '-') || '>' || to_state
		|| CASE WHEN detail ->> 'record' = 'execution' THEN ':R' ELSE '' END, ' ' ORDER BY id)
	FROM airlock.execution_events WHERE execution_id = x
$$;
-- The request against its latest record, wherever that record sits.
CREATE FUNCTION pg_temp.latest_is_row(x bigint) RETURNS boolean LANGUAGE sql AS $$
	SELECT (SELECT detail -> 'execution' FROM airlock.execution_events
		WHERE execution_id = x AND detail ->> 'record' = 'execution' ORDER BY id DESC LIMIT 1)
	     = (SELECT airlock._execution_record(e) FROM airlock.executions e WHERE e.id = x)
$$;

SET SESSION AUTHORIZATION r_agent;
SELECT airlock.run('proxmox-host:hubris', 'uptime') AS ro \gset
SELECT airlock.run('proxmox-host:hubris', 'df -h') AS queued \gset
SELECT airlock.run('proxmox-host:hubris', 'systemctl restart nginx') AS held \gset
RESET SESSION AUTHORIZATION;

-- ------------------------------------------------------------ a read-only run
SET SESSION AUTHORIZATION r_worker;
SELECT is(pg_temp.take(:ro, 'read_only', 'user'), 'running', 'the observation is claimed and started');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.trail(:ro), '->received:R received>queued queued>running:R',
  'the request and its start carry their records; no record event of its own');
SELECT is(pg_temp.latest_is_row(:ro), true, 'and that record is the running row');
SET SESSION AUTHORIZATION r_worker;
SELECT is(airlock.worker_finish(:ro, 'w1', 'succeeded', 0, NULL, 'up 3 days', '', false, false, 5, NULL), true,
  'the finish is recorded');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.trail(:ro), '->received:R received>queued queued>running:R running>succeeded:R',
  'the finish carries the record too: four events, not seven');
SELECT is((SELECT detail -> 'execution' ->> 'state' || '/' || (detail -> 'execution' ->> 'exit_code')
             || '/' || (detail ->> 'exit_code') || '/' || (detail ->> 'worker')
           FROM airlock.execution_events WHERE execution_id = :ro AND to_state = 'succeeded'),
  'succeeded/0/0/w1', 'beside the transition''s own detail, the record of the finished row');
SELECT is(pg_temp.latest_is_row(:ro), true, 'the latest record is the row as it stands');
SELECT is(current_setting('airlock.recorded', true), '', 'the calls leave the setting cleared');
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'verification holds, unsealed');
SELECT cmp_ok(airlock.seal_events(1000), '>', 0, 'the events seal');
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'and holds sealed');

-- ------------------------------------------------------------ queued, and held for approval
SET SESSION AUTHORIZATION r_worker;
SELECT is(pg_temp.take(:queued, 'read_only', NULL), 'queued', 'a row claimed without a jail waits queued');
SELECT is(pg_temp.take(:held, 'config_mutation', 'user'), 'pending_approval', 'a change is held');
RESET SESSION AUTHORIZATION;
SELECT is(pg_temp.trail(:queued), '->received:R received>queued:R',
  'the classification carries the queued row''s record');
SELECT is(pg_temp.latest_is_row(:queued), true, 'and it is the row');
SELECT matches(pg_temp.trail(:held), '^->received:R record>record:R .*received>pending_approval$',
  'a held row''s changes write record events as before; the transition carries none');
SELECT is(pg_temp.latest_is_row(:held), true, 'the held row''s latest record is the row');
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'verification holds');

-- ------------------------------------------------------------ no detail passes for a record
SET SESSION AUTHORIZATION r_worker;
SELECT lives_ok(format($$ SELECT airlock.worker_note(%s, 'w1',
  '{"step": "x", "record": "execution", "execution": {"state": "succeeded"}}') $$, :queued),
  'a worker''s note may say anything');
SELECT lives_ok(format($$ SELECT airlock.worker_refuse(%s, 'w1', 'gone',
  '{"record": "execution", "execution": {"state": "queued"}}') $$, :queued),
  'and so may a refusal''s detail');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.execution_events
           WHERE execution_id = :queued AND from_state IS DISTINCT FROM 'record' AND detail ? 'record'
             AND to_state IN ('queued', 'refused') AND id > (SELECT min(id) FROM airlock.execution_events
               WHERE execution_id = :queued AND to_state = 'queued')), 0::bigint,
  'but neither event carries the key a record is found by');
SELECT is(pg_temp.latest_is_row(:queued), true, 'the refused row''s latest record is the trigger''s');
SELECT is((SELECT first_broken FROM airlock.audit_verify()), NULL, 'verification holds');

-- ------------------------------------------------------------ the setting only hides a change
BEGIN;
SELECT set_config('airlock.recorded', :'ro', true) AS ignored \gset
UPDATE airlock.executions SET error = 'edited by hand' WHERE id = :ro;
COMMIT;
SELECT is(pg_temp.latest_is_row(:ro), false, 'a hand edit under the setting writes no record');
SELECT matches((SELECT detail FROM airlock.audit_verify()),
  format('^execution %s differs from its record \(event [0-9]+\)', :ro),
  'and verification reports the row as differing from its latest record');
BEGIN;
SELECT set_config('airlock.recorded', :'queued', true) AS ignored \gset
UPDATE airlock.executions SET error = 'edited by hand' WHERE id = :held;
COMMIT;
SELECT is(pg_temp.latest_is_row(:held), true, 'the setting naming another row hides nothing');

INSERT INTO airlock.executions (target, target_type, command, requested_by)
VALUES ('proxmox-host:hubris', 'proxmox-host', 'echo by hand', 'nobody') RETURNING id AS hand \gset
SELECT is(pg_temp.trail(:hand), 'record>record:R', 'a request inserted by hand gets its record event from the trigger');
SELECT is(pg_temp.latest_is_row(:hand), true, 'of the row as inserted');

-- ------------------------------------------------------------ what an operator reads
SELECT is((SELECT string_agg(coalesce(from_state, '-') || '>' || to_state, ' ' ORDER BY event_id,
                  from_state IS NOT DISTINCT FROM 'record')
           FROM airlock.history WHERE execution_id = :ro),
  '->received record>record received>queued queued>running record>record running>succeeded record>record',
  'history shows each carried record as its own line, after its transition');
SELECT is((SELECT count(*) FROM airlock.history WHERE execution_id = :ro AND from_state <> 'record'
           AND (detail ? 'record' OR detail ? 'execution')), 0::bigint,
  'a transition''s line holds its own detail only');
SELECT is((SELECT detail -> 'execution' ->> 'state' FROM airlock.history h
           WHERE execution_id = :ro AND from_state = 'record'
             AND event_id = (SELECT id FROM airlock.execution_events WHERE execution_id = :ro AND to_state = 'succeeded')),
  'succeeded', 'the record line under the finish''s id is the finished row');

SELECT * FROM finish();
