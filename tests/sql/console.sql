-- console.sql -- migration 0033 attacked as each role (pgTAP): where the
-- console is and the links built from it, signed single-use action links
-- (altered, reused, for someone else, expired, for a changed payload, used
-- by the requester, without a reason), chat identities and their log, the
-- gate for hard-to-read commands (confirm and quorum), notifications that
-- carry the links only while a request waits, and an inventory refused with
-- the place it names.  Run by tests/suites/20-sql.sh on a freshly migrated
-- throwaway database.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT * FROM no_plan();

SELECT airlock.seed_inventory($$ {"entities": [
  {"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1", "port": 2222},
  {"slug": "vm:web01", "type": "vm", "node": "proxmox-host:hubris", "vmid": 101,
   "attributes": {"qemu_guest_agent": "running"}}]} $$) \g /dev/null
SELECT airlock.seed_policy('rules: []', 'console.sql', '[]') \g /dev/null

CREATE ROLE c_agent LOGIN IN ROLE airlock_agent;
CREATE ROLE c_ada LOGIN IN ROLE airlock_operator;
CREATE ROLE c_ben LOGIN IN ROLE airlock_operator;
CREATE ROLE c_web LOGIN IN ROLE airlock_web;
CREATE ROLE c_boss LOGIN IN ROLE airlock_owner;
GRANT USAGE ON SCHEMA public TO PUBLIC;

-- The worker's classification of one row, through the real worker function.
CREATE FUNCTION pg_temp.hold(id bigint, cls text) RETURNS text LANGUAGE sql AS $$
	UPDATE airlock.executions SET claimed_by = 'w1' WHERE executions.id = hold.id;
	SELECT airlock.worker_classified(hold.id, 'w1', cls, '[]', 1, 'test', 'none', false);
$$;
-- The SQLSTATE and DETAIL a statement raises, or 'ok'.
CREATE FUNCTION pg_temp.outcome(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE sql;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || coalesce(' ' || nullif(d, ''), '');
END
$$;
-- A request by c_agent held for approval; its id.
CREATE FUNCTION pg_temp.ask(command text, cls text DEFAULT 'config_mutation') RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	id bigint;
BEGIN
	SET LOCAL SESSION AUTHORIZATION c_agent;
	id := airlock.run('proxmox-host:hubris', command, NULL, NULL, 'for the test');
	RESET SESSION AUTHORIZATION;
	PERFORM pg_temp.hold(id, cls);
	RETURN id;
END
$$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pg_temp TO PUBLIC;
CREATE FUNCTION pg_temp.flip(token text) RETURNS text LANGUAGE sql AS $$
	SELECT left(token, 63) || CASE right(token, 1) WHEN '0' THEN '1' ELSE '0' END
$$;

-- ============================================================ where the console is
SELECT is(airlock.console_url('/r/1'), NULL, 'no console address known: no link at all');
SELECT is(airlock.console_url('/r/1', 'https://fallback.example/base/'), 'https://fallback.example/base/r/1',
  'a daemon''s base_url serves until a console publishes its own');
SET SESSION AUTHORIZATION c_ada;
SELECT throws_ok($$ SELECT airlock.web_publish_url('https://evil.example') $$, '42501', NULL,
  'an operator cannot publish the console''s address');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION c_web;
SELECT throws_ok($$ SELECT airlock.web_publish_url('javascript:alert(1)') $$, 'AL002', NULL,
  'an address that is not http(s) is refused');
SELECT throws_ok($$ SELECT airlock.web_publish_url('https://c.example/?next=//evil') $$, 'AL002', NULL,
  '... and one with a query');
SELECT lives_ok($$ SELECT airlock.web_publish_url('https://console.example:8443/') $$,
  'airlock-web''s own login publishes its public_url');
RESET SESSION AUTHORIZATION;
SELECT is(airlock.console_url('/r/7', 'https://fallback.example'), 'https://console.example:8443/r/7',
  'the published address wins over a fallback, one slash between');

-- ============================================================ action links
SELECT is(pg_temp.ask('systemctl restart pveproxy'), 1::bigint, 'request 1 waits');
SELECT ok(airlock._action_mint(1, 'approve', NULL, 'test') ~ '^[0-9a-f]{64}$', 'a link''s token is 64 hex');
CREATE TEMP TABLE t AS SELECT
	airlock._action_mint(1, 'approve', 'c_ada', 'test') AS for_ada,
	airlock._action_mint(1, 'reject', NULL, 'test') AS rej_any;
GRANT SELECT ON t TO PUBLIC;
SELECT is((SELECT count(*) FROM airlock.action_links WHERE execution_id = 1), 3::bigint, 'three links made');
SELECT is((SELECT count(*) FROM airlock.action_links WHERE nonce IS NOT NULL AND octet_length(nonce) = 16),
  3::bigint, 'only the nonce is kept, not the token');
SET SESSION AUTHORIZATION c_agent;
SELECT throws_ok($$ SELECT airlock.action_link((SELECT for_ada FROM t)) $$, '42501', NULL,
  'an agent cannot even look at a link');
SELECT throws_ok($$ SELECT airlock.action_link_use((SELECT for_ada FROM t)) $$, '42501', NULL,
  '... nor use one');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION c_ada;
SELECT is((SELECT problem FROM airlock.action_link((SELECT for_ada FROM t))), NULL, 'c_ada''s link is usable by c_ada');
SELECT is((SELECT execution_id || ' ' || decision || ' ' || sent_to FROM airlock.action_link((SELECT for_ada FROM t))),
  '1 approve c_ada', '... and says what it decides, and for whom');
SELECT is((SELECT problem FROM airlock.action_link(pg_temp.flip((SELECT for_ada FROM t)))),
  'this is not a link airlock sent, or it was altered', 'a token with one character changed is refused');
SELECT is((SELECT problem FROM airlock.action_link('../../r/1')), 'this is not a link airlock sent (it is malformed)',
  'a malformed token is refused');
SELECT throws_ok($$ SELECT airlock.action_link_use(pg_temp.flip((SELECT for_ada FROM t))) $$, 'AL022', NULL,
  'an altered link decides nothing');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION c_ben;
SELECT matches((SELECT problem FROM airlock.action_link((SELECT for_ada FROM t))),
  '^this link was sent to c_ada, and you are signed in as c_ben', 'a link sent to c_ada is refused to c_ben');
SELECT throws_like($$ SELECT airlock.action_link_use((SELECT for_ada FROM t)) $$,
  'action link: this link was sent to c_ada%Nothing was decided.', 'c_ben cannot use it');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT state FROM airlock.executions WHERE id = 1), 'pending_approval', 'nothing was decided');
SELECT is((SELECT count(*) FROM airlock.approvals WHERE execution_id = 1), 0::bigint, 'no vote was written');
-- The row of a link altered in the database (its expiry pushed out) no longer matches its signature.
UPDATE airlock.action_links SET expires_at = expires_at + interval '1 day'
WHERE nonce = decode(left((SELECT rej_any FROM t), 32), 'hex');
SET SESSION AUTHORIZATION c_ben;
SELECT is((SELECT problem FROM airlock.action_link((SELECT rej_any FROM t))),
  'this is not a link airlock sent, or it was altered', 'a link whose stored expiry was changed is refused');
RESET SESSION AUTHORIZATION;
UPDATE airlock.action_links SET expires_at = expires_at - interval '1 day'
WHERE nonce = decode(left((SELECT rej_any FROM t), 32), 'hex');
SET SESSION AUTHORIZATION c_ben;
SELECT is((SELECT problem FROM airlock.action_link((SELECT rej_any FROM t))), NULL, '... and usable again once restored');
SELECT throws_ok($$ SELECT airlock.action_link_use((SELECT rej_any FROM t)) $$, 'AL002', NULL,
  'a rejection through a link still needs a reason');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT used_at FROM airlock.action_links WHERE nonce = decode(left((SELECT rej_any FROM t), 32), 'hex')),
  NULL, 'a refused use leaves the link unused');
SET SESSION AUTHORIZATION c_ada;
SELECT is(airlock.action_link_use((SELECT for_ada FROM t), 'via the link'), 'approved', 'c_ada approves through her link');
SELECT throws_like($$ SELECT airlock.action_link_use((SELECT for_ada FROM t)) $$,
  'action link: this link was already used (approve: approved by c_ada at %', 'the same link never decides twice');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT approver || ' ' || reason FROM airlock.approvals WHERE execution_id = 1), 'c_ada via the link',
  'the vote is c_ada''s own, with her note');
SELECT is((SELECT count(*) FROM airlock.execution_events WHERE execution_id = 1 AND to_state = 'approved'),
  1::bigint, 'one chained event for the decision');
SET SESSION AUTHORIZATION c_ben;
SELECT matches((SELECT problem FROM airlock.action_link((SELECT rej_any FROM t))),
  '^request 1 is approved now: there is nothing left to decide', 'the other link of a decided request is dead');
RESET SESSION AUTHORIZATION;

-- expiry with the request
SELECT is(pg_temp.ask('systemctl restart pvedaemon'), 2::bigint, 'request 2 waits');
UPDATE airlock.executions SET expires_at = clock_timestamp() + interval '1 second' WHERE id = 2;
CREATE TEMP TABLE t2 AS SELECT airlock._action_mint(2, 'approve', NULL, 'test') AS tok;
GRANT SELECT ON t2 TO PUBLIC;
SELECT pg_sleep(1.2) \g /dev/null
SET SESSION AUTHORIZATION c_ada;
SELECT matches((SELECT problem FROM airlock.action_link((SELECT tok FROM t2))), '^this link expired at ',
  'a link expires with the request''s time to decide');
SELECT throws_ok($$ SELECT airlock.action_link_use((SELECT tok FROM t2)) $$, 'AL022', NULL, '... and then decides nothing');
RESET SESSION AUTHORIZATION;

-- a changed payload
SELECT is(pg_temp.ask('systemctl restart pvestatd'), 3::bigint, 'request 3 waits');
CREATE TEMP TABLE t3 AS SELECT airlock._action_mint(3, 'approve', NULL, 'test') AS tok;
GRANT SELECT ON t3 TO PUBLIC;
UPDATE airlock.executions SET payload_hash = md5(payload_hash) WHERE id = 3;
SET SESSION AUTHORIZATION c_ada;
SELECT matches((SELECT problem FROM airlock.action_link((SELECT tok FROM t3))),
  '^request 3 changed since this link was sent', 'a link for an earlier payload is refused');
SELECT throws_ok($$ SELECT airlock.action_link_use((SELECT tok FROM t3)) $$, 'AL022', NULL, '... and approves nothing');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.approvals WHERE execution_id = 3), 0::bigint, 'no vote for request 3');

-- the requester cannot approve their own request through a link either
SET SESSION AUTHORIZATION c_ada;
SELECT is(airlock.run('proxmox-host:hubris', 'systemctl restart corosync', NULL, NULL, 'c_ada asks'), 4::bigint,
  'an operator asks (request 4)');
RESET SESSION AUTHORIZATION;
SELECT pg_temp.hold(4, 'config_mutation') \g /dev/null
CREATE TEMP TABLE t4 AS SELECT airlock._action_mint(4, 'approve', NULL, 'test') AS tok;
GRANT SELECT ON t4 TO PUBLIC;
SET SESSION AUTHORIZATION c_ada;
SELECT throws_ok($$ SELECT airlock.action_link_use((SELECT tok FROM t4)) $$, 'AL006', NULL,
  'a link does not let the requester approve their own request');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT used_at FROM airlock.action_links WHERE nonce = decode(left((SELECT tok FROM t4), 32), 'hex')),
  NULL, '... and stays unused');

-- ============================================================ notifications carry the links while it waits
SELECT airlock.notify_expand('[{"name": "chan", "url": "http://r"}, {"name": "c_ada-phone", "url": "http://r", "operator": "c_ada"}]', 100) \g /dev/null
CREATE TEMP TABLE due AS SELECT * FROM airlock.notify_due(ARRAY['chan', 'c_ada-phone'], 100, 30, NULL);
SELECT ok((SELECT bool_and(request_url = 'https://console.example:8443/r/' || execution_id) FROM due),
  'every notification links the request''s page');
SELECT ok((SELECT bool_and(approve_url ~ '^https://console\.example:8443/a/[0-9a-f]{64}$'
                       AND reject_url ~ '^https://console\.example:8443/a/[0-9a-f]{64}$')
           FROM due WHERE event = 'pending_approval' AND state = 'pending_approval'),
  'while a request waits its notification carries an approve and a reject link');
SELECT ok((SELECT bool_and(approve_url IS NULL AND reject_url IS NULL) FROM due WHERE state <> 'pending_approval'),
  'a decided request''s notification carries none');
SELECT is((SELECT action FROM due WHERE execution_id = 3 AND hook = 'chan' AND event = 'pending_approval'),
  'for the test', 'and it says what the agent said the change is for');
SELECT is((SELECT operator FROM airlock.action_links l JOIN due d ON d.delivery_id = l.delivery_id
           WHERE d.hook = 'c_ada-phone' AND d.execution_id = 3 AND l.decision = 'approve'), 'c_ada',
  'the links of a hook that names an operator are bound to that operator');
SELECT is((SELECT count(*) FROM due WHERE hook = 'c_ada-phone' AND execution_id = 4), 0::bigint,
  'c_ada is not notified of her own request');
-- a retry of a delivery carries the same links
UPDATE airlock.notification_deliveries SET next_attempt_at = now() - interval '1 second'
WHERE id = (SELECT delivery_id FROM due WHERE execution_id = 3 AND hook = 'chan' AND event = 'pending_approval');
SELECT is((SELECT approve_url FROM airlock.notify_due(ARRAY['chan'], 1, 30, NULL)),
  (SELECT approve_url FROM due WHERE execution_id = 3 AND hook = 'chan' AND event = 'pending_approval'),
  'a retried delivery sends the same links, not new ones');

-- ============================================================ chat identities
SET SESSION AUTHORIZATION c_ada;
SELECT throws_ok($$ SELECT airlock.chat_map('slack', 'U0ADA', 'c_ada') $$, '42501', NULL,
  'an operator cannot map chat users (not even to herself)');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION c_boss;
SELECT throws_ok($$ SELECT airlock.chat_map('irc', 'U0ADA', 'c_ada') $$, 'AL002', NULL, 'an unknown chat service is refused');
SELECT throws_ok($$ SELECT airlock.chat_map('slack', 'U0 ADA', 'c_ada') $$, 'AL002', NULL, 'a malformed chat user id is refused');
SELECT throws_ok($$ SELECT airlock.chat_map('slack', 'U0ARES', 'c_agent') $$, 'AL009', NULL,
  'a chat user cannot be mapped to an agent''s login');
SELECT lives_ok($$ SELECT airlock.chat_map('slack', 'U0ADA', 'c_ada') $$, 'an administrator maps a Slack user to c_ada');
SELECT lives_ok($$ SELECT airlock.chat_map('mattermost', 'mmben', 'c_ben') $$, '... and a Mattermost user to c_ben');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT string_agg(change || ' ' || service || ' ' || chat_user || ' ' || login || ' by ' || by_login, '; ' ORDER BY id)
           FROM airlock.chat_identity_log), 'map slack U0ADA c_ada by c_boss; map mattermost mmben c_ben by c_boss',
  'every mapping is kept in the log');
SELECT throws_ok($$ DELETE FROM airlock.chat_identity_log $$, '42501', NULL, 'the log is append-only');

SELECT is(pg_temp.ask('systemctl restart pve-firewall'), 5::bigint, 'request 5 waits');
CREATE TEMP TABLE t5 AS SELECT airlock._action_mint(5, 'approve', NULL, 'webhook:chan') AS chan,
	airlock._action_mint(5, 'approve', 'c_ada', 'webhook:c_ada-phone') AS for_ada;
GRANT SELECT ON t5 TO PUBLIC;
SET SESSION AUTHORIZATION c_ada;
SELECT throws_ok($$ SELECT * FROM airlock.web_chat_link('slack', 'U0ADA', (SELECT chan FROM t5)) $$, '42501', NULL,
  'an operator cannot mint links through the chat function');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION c_web;
SELECT matches((SELECT problem FROM airlock.web_chat_link('slack', 'U0NOBODY', (SELECT chan FROM t5))),
  '^your slack user U0NOBODY is not mapped to an airlock operator; an administrator maps it with: airlock chat map slack U0NOBODY LOGIN',
  'an unmapped chat user gets no link, and is told what to ask for');
CREATE TEMP TABLE c5 AS SELECT * FROM airlock.web_chat_link('slack', 'U0ADA', (SELECT chan FROM t5));
GRANT SELECT ON c5 TO PUBLIC;
SELECT is((SELECT login || ' ' || coalesce(problem, 'none') FROM c5), 'c_ada none', 'a mapped chat user gets a link as c_ada');
SELECT ok((SELECT url ~ '^https://console\.example:8443/a/[0-9a-f]{64}$' FROM c5), '... to the confirmation page');
SELECT matches((SELECT problem FROM airlock.web_chat_link('mattermost', 'mmben', (SELECT for_ada FROM t5))),
  '^this link was sent to c_ada, and you are signed in as c_ben', 'a button sent to c_ada gives c_ben nothing');
SELECT matches((SELECT problem FROM airlock.web_chat_link('slack', 'U0ADA', pg_temp.flip((SELECT chan FROM t5)))),
  'altered', 'a forged token gives nothing');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT operator || ' ' || sent_via || ' ' || chat_user FROM airlock.action_links
           WHERE nonce = decode(left(substring((SELECT url FROM c5) FROM '/a/(.*)$'), 32), 'hex')),
  'c_ada slack U0ADA', 'the chat''s link is bound to the mapped login and says where it came from');
SET SESSION AUTHORIZATION c_ben;
SELECT matches((SELECT problem FROM airlock.action_link(substring((SELECT url FROM c5) FROM '/a/(.*)$'))),
  '^this link was sent to c_ada', 'c_ben cannot use the link the chat gave c_ada');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION c_ada;
SELECT is(airlock.action_link_use(substring((SELECT url FROM c5) FROM '/a/(.*)$')), 'approved',
  'c_ada approves through the chat''s link, as herself');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM airlock.web_history WHERE kind = 'chat_action'), 4::bigint,
  'every button press is in the console''s history');
SET SESSION AUTHORIZATION c_boss;
SELECT is(airlock.chat_unmap('slack', 'U0ADA'), true, 'an administrator unmaps');
SELECT is(airlock.chat_unmap('slack', 'U0ADA'), false, '... once');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT change || ' ' || login FROM airlock.chat_identity_log ORDER BY id DESC LIMIT 1), 'unmap c_ada',
  'the unmapping is in the log too');

-- ============================================================ hard-to-read commands
SELECT is((SELECT hidden || ' ' || bidi || ' ' || lines || ' ' || hard FROM airlock.command_legibility(E'apt-get install -y nfs\n\tdone')),
  '0 0 2 false', 'newlines and tabs are no hidden characters');
SELECT is((SELECT hidden || ' ' || bidi || ' ' || why FROM airlock.command_legibility(E'echo \u001b[2K\r \u202egpj')),
  '3 1 3 hidden characters (1 direction-changing)', 'controls and bidi are counted');
SELECT is((SELECT why FROM airlock.command_legibility(repeat(E'echo x\n', 30))), '31 lines (more than 24)',
  'a command longer than a screen is hard to read');
SELECT is((SELECT why FROM airlock.command_legibility(repeat('x', 2001))), '2001 bytes (more than 2000)',
  '... by its bytes too');
SELECT is(pg_temp.ask(E'systemctl restart pveproxy \u202e'), 6::bigint, 'request 6 hides a bidi control');
SET SESSION AUTHORIZATION c_ben;
SELECT throws_ok($$ SELECT airlock.approve(6, 'looks fine') $$, 'AL021', NULL,
  'approving a hard-to-read command without saying it was read is refused');
SELECT throws_like($$ SELECT airlock.approve(6) $$,
  '%its command is hard to read (1 hidden character (1 direction-changing))%--confirm-unreadable%',
  '... and the refusal says why and how');
SELECT is(airlock.approve(6, 'read it', confirmed => true), 'approved', 'with confirmed => true it is approved');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT detail ->> 'confirmed_read' || ' ' || (detail ->> 'hard_to_read') FROM airlock.execution_events
           WHERE execution_id = 6 AND to_state = 'approved'), 'true 1 hidden character (1 direction-changing)',
  'the approval''s event records that its approver confirmed reading it');
-- quorum instead of confirm
SELECT airlock.seed_gate('hard_to_read: quorum', 'console.sql',
  '{"classes": {"config_mutation": {"quorum": 1, "ttl_s": 3600, "approval_valid_for_s": 900},
               "destructive": {"quorum": 2, "ttl_s": 3600, "approval_valid_for_s": 900}},
    "rules": [], "limits": {"requests_per_minute": 60, "pending_per_agent": 100, "attribute_bytes": 65536,
                             "attribute_keys": 256, "relationships_per_entity": 256},
    "hard_to_read": {"action": "quorum", "max_lines": 24, "max_bytes": 2000}}');
SELECT is((SELECT action FROM airlock.gate_legibility), 'quorum', 'a gate policy says quorum');
SELECT is(pg_temp.ask(E'systemctl restart pveproxy \u200b'), 7::bigint, 'request 7 hides a zero-width space');
SELECT is((SELECT approvals_required FROM airlock.executions WHERE id = 7), 2, 'it needs one approver more than its class');
SELECT is(pg_temp.ask('systemctl restart pveproxy'), 8::bigint, 'request 8 is plain');
SELECT is((SELECT approvals_required FROM airlock.executions WHERE id = 8), 1, 'it needs its class''s quorum');
SET SESSION AUTHORIZATION c_ada;
SELECT is(airlock.approve(7), 'pending_approval', 'under quorum no confirmation is asked, but one vote is not enough');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION c_ben;
SELECT is(airlock.approve(7), 'approved', 'a second operator completes it');
RESET SESSION AUTHORIZATION;
SELECT throws_ok($$ SELECT airlock.seed_gate('x', 'console.sql',
  '{"classes": {"config_mutation": {"quorum": 1, "ttl_s": 3600, "approval_valid_for_s": 900},
               "destructive": {"quorum": 2, "ttl_s": 3600, "approval_valid_for_s": 900}},
    "rules": [], "limits": {"requests_per_minute": 60, "pending_per_agent": 100, "attribute_bytes": 65536,
                             "attribute_keys": 256, "relationships_per_entity": 256},
    "hard_to_read": {"action": "shrug"}}') $$, 'AL002', NULL, 'an unknown hard_to_read action is refused');

-- ============================================================ the inventory says where
CREATE TEMP TABLE before AS SELECT count(*) AS n FROM airlock.entities;
SELECT is(pg_temp.outcome($$ SELECT airlock.seed_inventory('{"entities": [
  {"slug": "vm:a", "type": "vm", "node": "proxmox-host:hubris", "vmid": 300},
  {"slug": "lxc:b", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 300}]}') $$),
  'AL002 entities[1].vmid', 'two guests of one node with one VMID are refused, naming the second');
SELECT throws_like($$ SELECT airlock.seed_inventory('{"entities": [
  {"slug": "vm:a", "type": "vm", "node": "proxmox-host:hubris", "vmid": 300},
  {"slug": "lxc:b", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 300}]}') $$,
  'inventory: vm:a and lxc:b both have vmid 300 on proxmox-host:hubris%', '... in words');
SELECT is(pg_temp.outcome($$ SELECT airlock.seed_inventory('{"entities": [
  {"slug": "proxmox-host:nyx", "type": "proxmox-host", "address": "10.0.0.2"},
  {"slug": "vm:c", "type": "vm", "node": "proxmox-host:nowhere", "vmid": 301}]}') $$),
  'AL002 entities[1].node', 'a node that is no host is refused, naming the guest''s node');
SELECT is(pg_temp.outcome($$ SELECT airlock.seed_inventory('{"entities": [
  {"slug": "vm:Bad slug", "type": "vm", "node": "proxmox-host:hubris", "vmid": 302}]}') $$),
  'AL002 entities[0].slug', 'a malformed slug is refused, naming it');
SELECT is(pg_temp.outcome($$ SELECT airlock.seed_inventory('{"entities": [
  {"slug": "vm:d", "type": "vm", "node": "proxmox-host:hubris", "vmid": 50}]}') $$),
  'AL002 entities[0].vmid', 'a VMID below 100 is refused, naming it');
SELECT is(pg_temp.outcome($$ SELECT airlock.seed_inventory('{"entities": [
  {"slug": "vm:e", "type": "vm", "node": "proxmox-host:hubris", "vmid": 303}],
  "relationships": [{"source": "vm:e", "target": "lxc:ghost", "type": "depends-on"}]}') $$),
  'AL001 relationships[0].target', 'a relationship to no entity is refused, naming its end');
SELECT is(pg_temp.outcome($$ SELECT airlock.seed_inventory('{"entities": [],
  "relationships": [{"source": "vm:web01", "target": "proxmox-host:hubris", "type": "Runs On"}]}') $$),
  'AL002 relationships[0].type', 'a malformed relationship type is refused, naming it');
SELECT is((SELECT count(*) FROM airlock.entities), (SELECT n FROM before), 'nothing of any refused inventory was written');
SELECT is(airlock.seed_inventory('{"entities": [
  {"slug": "vm:f", "type": "vm", "node": "proxmox-host:hubris", "vmid": 304},
  {"slug": "lxc:g", "type": "lxc", "node": "proxmox-host:hubris", "vmid": 305}]}'), 2,
  'guests with their own VMIDs are seeded');

SELECT * FROM finish();
