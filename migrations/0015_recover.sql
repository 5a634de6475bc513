-- 0015_recover.sql -- recovery requests: restore guest files from a rewind
-- point (a Zerto checkpoint) with journal file-level restore, always held for
-- an operator.  An agent (MCP recover_file, SQL airlock.recover) or an
-- operator (airlock recover) asks; airlockd plans it (which VPG holds the
-- checkpoint and recovers at this site, the checkpoint's time), holds it for
-- approval with that plan as its reasons, and after approval mounts, copies
-- the files back into the guest and unmounts, recording every step.
-- Operators may also ask for a whole VM to be inspected from a checkpoint: a
-- failover test (and its stop) or an offsite clone, through the same gate.
-- Live failover and move are never offered.

-- What a recovery request asks for, and the plan the worker made for it.
-- mode: files (restore paths), or a whole-VM inspection: failover_test,
-- stop_failover_test (no rewind point: it ends the VM's running test), clone.
CREATE TABLE airlock.recoveries (
	execution_id     bigint PRIMARY KEY REFERENCES airlock.executions (id),
	vm               text NOT NULL,
	mode             text NOT NULL DEFAULT 'files'
	                 CHECK (mode IN ('files', 'failover_test', 'stop_failover_test', 'clone')),
	paths            text[] CHECK (cardinality(paths) BETWEEN 1 AND 16),
	source_execution bigint REFERENCES airlock.executions (id),
	checkpoint       text CHECK (octet_length(checkpoint) BETWEEN 1 AND 500),
	keep_replaced    boolean NOT NULL,
	plan             jsonb,
	CHECK ((mode = 'files') = (paths IS NOT NULL)),
	CHECK (CASE WHEN mode = 'stop_failover_test' THEN source_execution IS NULL AND checkpoint IS NULL
		ELSE (source_execution IS NULL) <> (checkpoint IS NULL) END)
);

-- A guest path a recovery may restore: absolute (Linux /a/b, or Windows C:\a\b
-- or C:/a/b), no empty, "." or ".." component, no control character, not a
-- directory (no trailing separator).  NULL when it is fine, else why not.
CREATE FUNCTION airlock._recover_path_problem(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = airlock, pg_temp AS $$
DECLARE
	rest text;
	c text;
BEGIN
	IF p IS NULL OR p = '' THEN
		RETURN 'a path is empty';
	END IF;
	IF octet_length(p) > 1024 THEN
		RETURN format('path %s... is longer than 1024 bytes', left(p, 40));
	END IF;
	IF p ~ '[\x01-\x1f\x7f]' THEN
		RETURN format('path %s holds a control character', to_json(p)::text);
	END IF;
	IF p ~ '^/' THEN
		rest := substr(p, 2);
		IF rest = '' THEN
			RETURN 'path / is a directory, not a file';
		END IF;
		FOREACH c IN ARRAY string_to_array(rest, '/') LOOP
			IF c IN ('', '.', '..') THEN
				RETURN format('path %s has an empty, "." or ".." component; give the file''s plain absolute path', to_json(p)::text);
			END IF;
		END LOOP;
	ELSIF p ~ '^[A-Za-z]:[\\/]' THEN
		rest := substr(p, 4);
		IF rest = '' THEN
			RETURN format('path %s is a drive, not a file', p);
		END IF;
		FOREACH c IN ARRAY regexp_split_to_array(rest, '[\\/]') LOOP
			IF c IN ('', '.', '..') THEN
				RETURN format('path %s has an empty, "." or ".." component; give the file''s plain absolute path', to_json(p)::text);
			END IF;
		END LOOP;
	ELSE
		RETURN format('path %s is not absolute: give /etc/app.conf on Linux or C:\Users\j\app.conf on Windows', to_json(p)::text);
	END IF;
	RETURN NULL;
END
$$;

-- The gate policy's flood limits (as run() applies them), for a recovery or
-- an inspection request by the session user: raises AL010 over either.
CREATE FUNCTION airlock._recover_flood_check(what text) RETURNS void
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	lim record;
	n integer;
BEGIN
	IF NOT airlock._limits_apply() THEN
		RETURN;
	END IF;
	lim := airlock._limits();
	PERFORM pg_advisory_xact_lock(74287732, hashtext(session_user));
	SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.executions x
		WHERE x.requested_by = session_user AND x.created_at > now() - interval '1 minute'
		LIMIT lim.requests_per_minute) c;
	IF n >= lim.requests_per_minute THEN
		RAISE EXCEPTION '%: % already made % requests in the last minute; the gate policy allows % per minute (requests_per_minute). Nothing was queued.',
			what, session_user, n, lim.requests_per_minute USING ERRCODE = 'AL010';
	END IF;
	SELECT count(*) INTO n FROM (SELECT 1 FROM airlock.executions x
		WHERE x.requested_by = session_user
		  AND x.state IN ('received', 'queued', 'pending_approval', 'approved')
		LIMIT lim.pending_per_agent) c;
	IF n >= lim.pending_per_agent THEN
		RAISE EXCEPTION '%: % already has % requests waiting to run or to be decided; the gate policy allows % (pending_per_agent). Nothing was queued.',
			what, session_user, n, lim.pending_per_agent USING ERRCODE = 'AL010';
	END IF;
END
$$;

-- Asks to restore paths on a VM from a rewind point: the rewind points of
-- execution from_execution (a guarded run or guard request on that VM), or a
-- checkpoint named by its Zerto id or its tag.  keep_replaced: the file now at
-- each path is kept beside it as <path>.airlock-<request id>.  Always held for
-- an operator's approval.  Returns the execution id.
CREATE FUNCTION airlock.recover(vm text, paths text[], from_execution bigint DEFAULT NULL,
	checkpoint text DEFAULT NULL, keep_replaced boolean DEFAULT true, change_id text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ent airlock.entities;
	src airlock.executions;
	n integer;
	p text;
	why text;
	pf record;
	new_id bigint;
	what text;
	whence text;
BEGIN
	IF (from_execution IS NULL) = (checkpoint IS NULL OR btrim(checkpoint) = '') THEN
		RAISE EXCEPTION 'recover: name the rewind point: either from_execution (an execution id whose rewind points to use) or checkpoint (a Zerto checkpoint id or tag), not both'
			USING ERRCODE = 'AL002';
	END IF;
	IF paths IS NULL OR cardinality(paths) = 0 OR cardinality(paths) > 16 THEN
		RAISE EXCEPTION 'recover: paths must list 1 to 16 guest file paths' USING ERRCODE = 'AL002';
	END IF;
	IF array_ndims(paths) <> 1 THEN
		RAISE EXCEPTION 'recover: paths is a flat list of guest file paths' USING ERRCODE = 'AL002';
	END IF;
	FOREACH p IN ARRAY paths LOOP
		why := airlock._recover_path_problem(p);
		IF why IS NOT NULL THEN
			RAISE EXCEPTION 'recover: %', why USING ERRCODE = 'AL002';
		END IF;
	END LOOP;
	IF (SELECT count(DISTINCT x) FROM unnest(paths) x) <> cardinality(paths) THEN
		RAISE EXCEPTION 'recover: a path is listed twice' USING ERRCODE = 'AL002';
	END IF;
	IF octet_length(change_id) > 200 OR octet_length(checkpoint) > 500 THEN
		RAISE EXCEPTION 'recover: change_id is at most 200 bytes, checkpoint at most 500' USING ERRCODE = 'AL002';
	END IF;
	IF from_execution IS NOT NULL THEN
		SELECT * INTO src FROM airlock.executions x WHERE x.id = from_execution;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'recover: execution % not found', from_execution USING ERRCODE = 'AL007';
		END IF;
		IF src.kind = 'recover' OR src.target_type <> 'vm' OR NOT EXISTS (
			SELECT 1 FROM jsonb_array_elements(coalesce(src.rewind_points, '[]')) r
			WHERE r ->> 'checkpoint_id' IS NOT NULL) THEN
			RAISE EXCEPTION 'recover: execution % has no rewind point (no confirmed checkpoint was recorded on it); name a checkpoint instead', from_execution
				USING ERRCODE = 'AL002';
		END IF;
		IF vm IS NOT NULL AND btrim(vm) <> '' AND vm <> src.target AND 'vm:' || vm <> src.target THEN
			RAISE EXCEPTION 'recover: execution % ran on %, not on %', from_execution, src.target, vm
				USING ERRCODE = 'AL002';
		END IF;
		vm := src.target;
	END IF;
	IF vm IS NULL OR btrim(vm) = '' THEN
		RAISE EXCEPTION 'recover: vm is required with a checkpoint (a slug such as vm:web01, a name or a vmid)'
			USING ERRCODE = 'AL002';
	END IF;
	SELECT count(*) INTO n FROM airlock.entities e
	WHERE e.type = 'vm' AND (e.slug = recover.vm OR e.slug = 'vm:' || recover.vm
		OR (recover.vm ~ '^[0-9]{3,9}$' AND e.vmid = recover.vm::integer));
	IF n <> 1 THEN
		RAISE EXCEPTION 'recover: % matches % VMs in the inventory; name exactly one (its slug)', vm, n
			USING ERRCODE = 'AL001';
	END IF;
	SELECT * INTO ent FROM airlock.entities e
	WHERE e.type = 'vm' AND (e.slug = recover.vm OR e.slug = 'vm:' || recover.vm
		OR (recover.vm ~ '^[0-9]{3,9}$' AND e.vmid = recover.vm::integer));
	pf := airlock._preflight_problem(ent);
	IF pf.sqlstate IS NOT NULL THEN
		RAISE EXCEPTION 'recover on % blocked: the files are written back through the QEMU guest agent, which is not running. Start the agent first.', ent.slug
			USING ERRCODE = pf.sqlstate;
	END IF;
	PERFORM airlock._recover_flood_check('recover on ' || ent.slug);
	new_id := nextval(pg_get_serial_sequence('airlock.executions', 'id'));
	whence := CASE WHEN from_execution IS NOT NULL
		THEN format('the rewind point of execution %s', from_execution)
		ELSE format('checkpoint %s', btrim(checkpoint)) END;
	what := format('recover %s on %s from %s; %s', array_to_string(paths, ', '), ent.slug, whence,
		CASE WHEN keep_replaced THEN format('each current file is kept beside it as <path>.airlock-%s', new_id)
		ELSE 'current files are overwritten (not kept)' END);
	INSERT INTO airlock.executions (id, target, target_type, command, change_id, action, requested_by, kind)
	VALUES (new_id, ent.slug, ent.type, what, nullif(change_id, ''), 'recover files from a rewind point',
		session_user, 'recover');
	INSERT INTO airlock.recoveries (execution_id, vm, paths, source_execution, checkpoint, keep_replaced)
	VALUES (new_id, ent.slug, paths, from_execution, nullif(btrim(checkpoint), ''), keep_replaced);
	PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
		'kind', 'recover', 'paths', to_jsonb(paths), 'from_execution', from_execution,
		'checkpoint', checkpoint, 'keep_replaced', keep_replaced));
	PERFORM pg_notify('airlock_work', '');
	RETURN new_id;
END
$$;

-- Operators only: inspect a whole VM from a rewind point, held for another
-- operator like any request.  action: failover_test (a test copy of the VM
-- at its recovery site, from the checkpoint), stop_failover_test (ends the
-- VM's running test; no rewind point), clone (an offsite clone from the
-- checkpoint).  Live failover and move are not offered.
CREATE FUNCTION airlock.inspect(vm text, action text, from_execution bigint DEFAULT NULL,
	checkpoint text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ent airlock.entities;
	src airlock.executions;
	n integer;
	new_id bigint;
	whence text;
BEGIN
	PERFORM airlock._require_approver('inspect');
	IF action IS NULL OR action NOT IN ('failover_test', 'stop_failover_test', 'clone') THEN
		RAISE EXCEPTION 'inspect: action is failover_test, stop_failover_test or clone (live failover and move are never offered)'
			USING ERRCODE = 'AL002';
	END IF;
	IF action = 'stop_failover_test' AND (from_execution IS NOT NULL OR checkpoint IS NOT NULL) THEN
		RAISE EXCEPTION 'inspect: stop_failover_test takes no rewind point' USING ERRCODE = 'AL002';
	END IF;
	IF action <> 'stop_failover_test' AND (from_execution IS NULL) = (checkpoint IS NULL OR btrim(checkpoint) = '') THEN
		RAISE EXCEPTION 'inspect: name the rewind point: either from_execution or checkpoint (a Zerto checkpoint id or tag), not both'
			USING ERRCODE = 'AL002';
	END IF;
	IF from_execution IS NOT NULL THEN
		SELECT * INTO src FROM airlock.executions x WHERE x.id = from_execution;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'inspect: execution % not found', from_execution USING ERRCODE = 'AL007';
		END IF;
		IF src.kind = 'recover' OR src.target_type <> 'vm' OR NOT EXISTS (
			SELECT 1 FROM jsonb_array_elements(coalesce(src.rewind_points, '[]')) r
			WHERE r ->> 'checkpoint_id' IS NOT NULL) THEN
			RAISE EXCEPTION 'inspect: execution % has no rewind point; name a checkpoint instead', from_execution
				USING ERRCODE = 'AL002';
		END IF;
		IF vm IS NOT NULL AND btrim(vm) <> '' AND vm <> src.target AND 'vm:' || vm <> src.target THEN
			RAISE EXCEPTION 'inspect: execution % ran on %, not on %', from_execution, src.target, vm
				USING ERRCODE = 'AL002';
		END IF;
		vm := src.target;
	END IF;
	IF vm IS NULL OR btrim(vm) = '' THEN
		RAISE EXCEPTION 'inspect: vm is required (a slug such as vm:web01, a name or a vmid)' USING ERRCODE = 'AL002';
	END IF;
	SELECT count(*) INTO n FROM airlock.entities e
	WHERE e.type = 'vm' AND (e.slug = inspect.vm OR e.slug = 'vm:' || inspect.vm
		OR (inspect.vm ~ '^[0-9]{3,9}$' AND e.vmid = inspect.vm::integer));
	IF n <> 1 THEN
		RAISE EXCEPTION 'inspect: % matches % VMs in the inventory; name exactly one (its slug)', vm, n
			USING ERRCODE = 'AL001';
	END IF;
	SELECT * INTO ent FROM airlock.entities e
	WHERE e.type = 'vm' AND (e.slug = inspect.vm OR e.slug = 'vm:' || inspect.vm
		OR (inspect.vm ~ '^[0-9]{3,9}$' AND e.vmid = inspect.vm::integer));
	PERFORM airlock._recover_flood_check('inspect ' || ent.slug);
	new_id := nextval(pg_get_serial_sequence('airlock.executions', 'id'));
	whence := CASE WHEN from_execution IS NOT NULL
		THEN format('the rewind point of execution %s', from_execution)
		WHEN checkpoint IS NOT NULL THEN format('checkpoint %s', btrim(checkpoint)) END;
	INSERT INTO airlock.executions (id, target, target_type, command, action, requested_by, kind)
	VALUES (new_id, ent.slug, ent.type, CASE action
		WHEN 'failover_test' THEN format('start a Zerto failover test of %s from %s, for inspection', ent.slug, whence)
		WHEN 'clone' THEN format('make an offsite clone of %s from %s, for inspection', ent.slug, whence)
		ELSE format('stop the Zerto failover test of %s', ent.slug) END,
		'inspect a whole VM from a rewind point', session_user, 'recover');
	INSERT INTO airlock.recoveries (execution_id, vm, mode, source_execution, checkpoint, keep_replaced)
	VALUES (new_id, ent.slug, action, from_execution, nullif(btrim(checkpoint), ''), true);
	PERFORM airlock._event(new_id, NULL, 'received', jsonb_build_object('target', ent.slug,
		'kind', 'recover', 'mode', action, 'from_execution', from_execution, 'checkpoint', checkpoint));
	PERFORM pg_notify('airlock_work', '');
	RETURN new_id;
END
$$;

-- The worker's view of a claimed recovery: what was asked and where the
-- rewind point came from.
CREATE FUNCTION airlock.worker_recover_request(exec_id bigint, worker text)
RETURNS TABLE (vm text, paths jsonb, keep_replaced boolean, checkpoint text,
	       source_points jsonb, plan jsonb, zerto_vm_identifier text, mode text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received', 'approved', 'running']);
	IF e.kind <> 'recover' THEN
		RAISE EXCEPTION 'execution % is a % request, not a recovery', exec_id, e.kind USING ERRCODE = 'AL005';
	END IF;
	RETURN QUERY
		SELECT r.vm, to_jsonb(r.paths), r.keep_replaced, r.checkpoint, s.rewind_points, r.plan,
		       t.zerto_vm_identifier, r.mode
		FROM airlock.recoveries r
		JOIN airlock.entities t ON t.slug = r.vm
		LEFT JOIN airlock.executions s ON s.id = r.source_execution
		WHERE r.execution_id = exec_id;
END
$$;

-- The plan is made: the row waits for an operator, who sees summary (the
-- checkpoint, its time, the VPG and its recovery site, the paths, what
-- happens to the current files) as its reasons and rewind status.  The plan
-- is part of what is approved (the payload hash covers it).
CREATE FUNCTION airlock.worker_recover_hold(exec_id bigint, worker text, plan jsonb, summary text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	cls text;
	words text;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['received']);
	IF e.kind <> 'recover' THEN
		RAISE EXCEPTION 'execution % is a % request, not a recovery', exec_id, e.kind USING ERRCODE = 'AL005';
	END IF;
	IF plan IS NULL OR jsonb_typeof(plan) <> 'object' OR summary IS NULL OR summary = '' THEN
		RAISE EXCEPTION 'execution %: a recovery is held only with its plan', exec_id USING ERRCODE = 'AL002';
	END IF;
	UPDATE airlock.recoveries r SET plan = worker_recover_hold.plan WHERE r.execution_id = exec_id;
	-- Keeping the replaced files makes it undoable: a config change.  Without
	-- them it destroys what is there now.
	-- A whole-VM inspection builds test or cloned VMs at the recovery site and
	-- leaves the protected VM alone: a config change too.
	SELECT CASE WHEN r.mode <> 'files' OR r.keep_replaced THEN 'config_mutation' ELSE 'destructive' END,
	       CASE r.mode
	       WHEN 'files' THEN CASE WHEN r.keep_replaced
			THEN 'a file-level restore replaces guest files (each kept beside it); a human must confirm'
			ELSE 'a file-level restore overwrites guest files and keeps no copy; a human must confirm' END
	       WHEN 'failover_test' THEN 'a failover test brings up a copy of the VM at its recovery site for inspection; a human must confirm'
	       WHEN 'stop_failover_test' THEN 'ends the failover test of the VM and removes its test copy; a human must confirm'
	       ELSE 'an offsite clone makes a copy of the VM at its recovery site for inspection; a human must confirm' END
	INTO cls, words FROM airlock.recoveries r WHERE r.execution_id = exec_id;
	UPDATE airlock.executions SET class = cls, classified_at = now(),
		reasons = jsonb_build_array(jsonb_build_object('rule', 'recover', 'words', words)),
		rewind_status = summary, rewind_possible = true,
		payload_hash = airlock._payload_hash(e.target, e.command || E'\n' || plan::text, cls, 0)
	WHERE id = exec_id;
	PERFORM airlock._event(exec_id, 'received', 'pending_approval', jsonb_build_object('kind', 'recover',
		'worker', worker, 'plan', plan, 'summary', summary));
	-- Whatever the gate's quorum for the class, approve() wants at least one vote.
	PERFORM airlock._hold_for_approval(exec_id, cls);
END
$$;

-- approved -> running, unless the approval lapsed (then expired; returns the
-- state the row is in).
CREATE FUNCTION airlock.worker_recover_start(exec_id bigint, worker text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['approved']);
	IF e.kind <> 'recover' THEN
		RAISE EXCEPTION 'execution % is a % request, not a recovery', exec_id, e.kind USING ERRCODE = 'AL005';
	END IF;
	IF e.approval_valid_until IS NOT NULL AND e.approval_valid_until <= now() THEN
		PERFORM airlock._lapse(e, worker);
		PERFORM pg_advisory_unlock(exec_id);
		RETURN 'expired';
	END IF;
	UPDATE airlock.executions SET state = 'running', started_at = now() WHERE id = exec_id;
	PERFORM airlock._event(exec_id, 'approved', 'running', jsonb_build_object('kind', 'recover',
		'worker', worker));
	RETURN 'running';
END
$$;

-- One step of a running recovery (mount, browse, download, write, unmount ...).
CREATE FUNCTION airlock.worker_recover_step(exec_id bigint, worker text, detail jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM airlock._held(exec_id, worker, ARRAY['running']);
	PERFORM airlock._event(exec_id, 'running', 'running', coalesce(detail, '{}'));
END
$$;

-- The recovery ended: succeeded (every file restored and the session
-- unmounted) or failed; report is the whole account, error one sentence.
CREATE FUNCTION airlock.worker_recover_done(exec_id bigint, worker text, final_state text,
	report jsonb, error text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM airlock._held(exec_id, worker, ARRAY['running']);
	IF final_state NOT IN ('succeeded', 'failed') THEN
		RAISE EXCEPTION 'a recovery ends succeeded or failed, not %', final_state USING ERRCODE = 'AL002';
	END IF;
	UPDATE airlock.executions SET state = final_state, finished_at = now(), claimed_by = NULL,
		exit_code = CASE WHEN final_state = 'succeeded' THEN 0 ELSE 1 END,
		stdout = convert_to(jsonb_pretty(coalesce(report, '{}')), 'UTF8'),
		error = worker_recover_done.error,
		duration_ms = (extract(epoch FROM now() - started_at) * 1000)::bigint
	WHERE id = exec_id;
	PERFORM airlock._event(exec_id, 'running', final_state, jsonb_build_object('kind', 'recover',
		'worker', worker, 'report', report, 'error', error));
	PERFORM pg_advisory_unlock(exec_id);
END
$$;

-- ---------------------------------------------------------------- what the agent is told

-- What 0004's _next_step said, for every request that is not a recovery
-- and has no rewind point to offer.
CREATE OR REPLACE FUNCTION airlock._next_step_plain(e airlock.executions) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT CASE e.state
	WHEN 'received' THEN
		'airlock is classifying this request. Wait for it (get_execution, or run with wait_seconds). '
		|| 'Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'queued' THEN
		'Queued to run without approval. Wait for the result. '
		|| 'Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'pending_approval' THEN
		'Waiting for operator approval since ' || coalesce(to_char(e.classified_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'), 'now')
		|| ', expires at ' || coalesce(to_char(e.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'), 'no expiry')
		|| '. Wait, or ask your operator to review execution ' || e.id || ' (airlock pending; airlock approve '
		|| e.id || '). Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'approved' THEN
		'Approved; it will run shortly. '
		|| coalesce('The approval holds until '
			|| to_char(e.approval_valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"')
			|| '; if it has not started by then, it expires. ', '')
		|| 'Wait for the result. Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'running' THEN
		'Running since ' || coalesce(to_char(e.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'), 'now')
		|| '. Wait for the result. Do not go around airlock: raw SSH or another tool is not an option.'
	WHEN 'succeeded' THEN 'Finished with exit code 0. Read stdout and stderr.'
	WHEN 'failed' THEN 'Finished and failed (see exit_code, signal, stderr, error). Decide with your operator before retrying.'
	WHEN 'timed_out' THEN 'Stopped at airlock''s deadline; it may have partly taken effect. Check the target read-only before retrying.'
	WHEN 'rejected' THEN
		'Rejected by an operator: ' || coalesce((SELECT a.reason FROM airlock.approvals a
			WHERE a.execution_id = e.id AND a.decision = 'reject' ORDER BY a.at DESC LIMIT 1), 'no reason given')
		|| '. Ask your operator what should change; do not run it another way.'
	WHEN 'expired' THEN
		CASE WHEN e.decided_at IS NOT NULL THEN
			'Approved, but it did not start in time: ' || coalesce(e.error, 'the approval lapsed; nothing ran.')
			|| ' Ask your operator whether it is still wanted, then submit it again for a fresh approval; do not run it another way.'
		ELSE
			'No operator decided before it expired. Ask your operator before submitting it again; do not run it another way.'
		END
	WHEN 'cancelled' THEN 'Cancelled; nothing ran.'
	WHEN 'refused' THEN
		'Refused before anything ran: ' || coalesce(e.error, 'see the history') ||
		' Fix the cause or ask your operator; do not run it another way.'
	WHEN 'outcome_unknown' THEN
		'The worker or its link died while the command was running: it may or may not have taken effect. '
		|| 'It will not be re-run automatically. Ask your operator to check the target before doing anything else.'
	END
$$;

-- As in 0004, and: a recovery's result is its report; a failed, timed-out or
-- unknown-outcome change on a VM with rewind points names them and the
-- recovery request that would restore from them.
CREATE OR REPLACE FUNCTION airlock._next_step(e airlock.executions) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT CASE
	WHEN e.kind = 'recover' AND e.state = 'succeeded'
	     AND (SELECT r.mode FROM airlock.recoveries r WHERE r.execution_id = e.id) <> 'files' THEN
		'Done: the Zerto task ended Completed. Read stdout (the report: VPG, checkpoint, task). A failover test runs until an operator stops it (airlock inspect --stop-test).'
	WHEN e.kind = 'recover' AND e.state = 'succeeded' THEN
		'Recovered: every file was restored and the restore session was unmounted. Read stdout (the report: each file, its size and checksum, where the replaced file was kept).'
	WHEN e.kind = 'recover' AND e.state = 'failed' THEN
		'The recovery did not complete: ' || coalesce(e.error, 'see the history') ||
		' Read stdout (the report, including the unmount''s outcome). If a restore session is still mounted, an operator lists and ends it (airlock flr list; airlock flr end ID) before another recovery of this VM.'
	WHEN e.kind = 'recover' AND e.state = 'outcome_unknown' THEN
		'The worker died during the recovery. Each file is replaced in one rename, so each is either as it was or restored, and a replaced one was kept beside it; check the files (a temporary <path>.airlock-' || e.id || '.part may be left). Its file-level restore session may still be mounted and blocks the next recovery of this VM: ask your operator to end it (airlock flr list; airlock flr end ID) before asking again.'
	WHEN e.kind = 'recover' AND e.state = 'pending_approval' THEN
		'A recovery always waits for an operator: ask your operator to review execution ' || e.id
		|| ' (airlock show ' || e.id || '; airlock approve ' || e.id || '). You cannot approve it yourself.'
	WHEN e.state IN ('failed', 'timed_out', 'outcome_unknown') AND e.target_type = 'vm'
	     AND EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(e.rewind_points, '[]')) r
			 WHERE r ->> 'checkpoint_id' IS NOT NULL) THEN
		airlock._next_step_plain(e) || ' Rewind points taken before it ran: '
		|| (SELECT string_agg(format('checkpoint %s on VPG %s (%s)', r ->> 'checkpoint_id',
				coalesce(r ->> 'vpg_name', r ->> 'vpg_id'), coalesce(r ->> 'checkpoint_time', 'time unknown')), '; ')
		    FROM jsonb_array_elements(e.rewind_points) r WHERE r ->> 'checkpoint_id' IS NOT NULL)
		|| '. To restore files from them, request a recovery (an operator must approve it): '
		|| format('SELECT airlock.recover(%L, ARRAY[''/path/to/file''], from_execution => %s)', e.target, e.id)
		|| format(', or the MCP tool recover_file with execution_id %s and the guest paths.', e.id)
	ELSE airlock._next_step_plain(e)
	END
$$;

SELECT airlock._secure_new_objects();
GRANT SELECT ON airlock.recoveries TO airlock_operator, airlock_worker;
GRANT EXECUTE ON FUNCTION airlock.recover(text, text[], bigint, text, boolean, text)
TO airlock_agent, airlock_operator;
GRANT EXECUTE ON FUNCTION airlock.inspect(text, text, bigint, text) TO airlock_operator;
GRANT EXECUTE ON FUNCTION
	airlock.worker_recover_request(bigint, text),
	airlock.worker_recover_hold(bigint, text, jsonb, text),
	airlock.worker_recover_start(bigint, text),
	airlock.worker_recover_step(bigint, text, jsonb),
	airlock.worker_recover_done(bigint, text, text, jsonb, text)
TO airlock_worker;
