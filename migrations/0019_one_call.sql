-- 0019_one_call.sql -- a new run row is claimed, classified and (for an
-- observation) started in one call.
--
-- Until now a read-only run took four transactions after run(): the claim,
-- the classification, the start and the finish.  The wake-up that tells a
-- daemon about a new row now carries what the worker needs to classify it
-- and to check its target (the wake-up document, below), so the worker
-- classifies before it claims and then calls worker_claim_classified once:
-- that call claims the row only if it is still exactly what the worker saw,
-- records the classification, and, when the worker asks for it and the
-- class is read_only (no approval, no guard), marks it running in the same
-- transaction with one row update, so one record.  The events an auditor
-- reads stay the same: received -> queued with the class and reasons, then
-- queued -> running with the confinement.

-- The row goes from received to running in one update (the two transition
-- events above still say how).  Only worker_claim_classified does this, and
-- only for a read_only row it confines.
INSERT INTO airlock.transitions (from_state, to_state) VALUES ('received', 'running')
ON CONFLICT DO NOTHING;

-- What a worker needs to classify a new run row and to check its target
-- before claiming it: the command as asked, and how its node is reached.
-- NULL when the target is not in the inventory.  As the worker holds them:
-- port 22 when the inventory gives none, vmid 0 for a host.  The same
-- function checks, at the claim, that the row is still what the worker saw.
CREATE FUNCTION airlock._wake_doc(e airlock.executions) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
DECLARE
	doc jsonb;
BEGIN
	SELECT jsonb_build_object('id', e.id, 'target', e.target, 'target_type', e.target_type,
		'declared_risk', e.declared_risk, 'command', e.command, 'node', h.slug,
		'address', h.address, 'port', coalesce(h.port, 22), 'ssh_user', h.ssh_user,
		'host_key_fingerprint', h.host_key_fingerprint, 'vmid', coalesce(t.vmid, 0),
		'zerto_vm_identifier', t.zerto_vm_identifier)
	INTO doc
	FROM airlock.entities t JOIN airlock.entities h ON h.slug = coalesce(t.node, t.slug)
	WHERE t.slug = e.target;
	RETURN doc;
END
$$;

-- As in 0012 (one live daemon, picked at random, is told), and a run row
-- waiting to be classified carries its wake-up document: the payload is
-- "<id> <document>" when that fits in a notification, else "<id>" as before.
-- The channel's name is the secret that keeps the command from other logins.
CREATE OR REPLACE FUNCTION airlock._wake_one() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	ch text;
	payload text := NEW.id::text;
	doc text;
BEGIN
	SELECT c.channel INTO ch FROM airlock.worker_channels c
	WHERE airlock._channel_alive(c) ORDER BY random() LIMIT 1;
	IF ch IS NULL THEN
		RETURN NULL;
	END IF;
	IF NEW.state = 'received' AND NEW.kind = 'run' THEN
		doc := airlock._wake_doc(NEW)::text;
		-- A notification's payload must stay under 8000 bytes.
		IF doc IS NOT NULL AND octet_length(payload) + 1 + octet_length(doc) < 7900 THEN
			payload := payload || ' ' || doc;
		END IF;
	END IF;
	PERFORM pg_notify(ch, payload);
	RETURN NULL;
END
$$;

-- Claims run row exec_id if it waits to be classified and is exactly what
-- the worker saw (`seen`, its wake-up document as the worker read it), and
-- records the worker's classification of it, as worker_classified does
-- (the declared risk can only raise the class; a class that needs approval
-- is held for it).  With confinement (user or root) and a read_only class,
-- the row is also started, as worker_start would: one row update, one
-- record, the same two events as classifying then starting.  Without
-- confinement, or for any other class, it is left claimed and queued (or
-- held for approval) for the usual path.
-- Returns the row as worker_claim does, with its new state; no row when it
-- is not there to be claimed as seen (the worker then claims as usual).
CREATE FUNCTION airlock.worker_claim_classified(worker text, exec_id bigint, seen jsonb,
	cls text, reasons jsonb, p_policy_version bigint, classifier_version text,
	rewind_status text, p_rewind_possible boolean, confinement text)
RETURNS TABLE (id bigint, state text, target text, target_type text, command text,
	       declared_risk text, change_id text, action text, requested_by text, class text,
	       policy_version bigint, rewind_possible boolean, attempts integer, vmid integer,
	       node text, address text, port integer, ssh_user text, host_key_fingerprint text,
	       zerto_vm_identifier text, kind text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	final text;
	new_state text;
	go boolean;
BEGIN
	IF worker IS NULL OR btrim(worker) = '' THEN
		RAISE EXCEPTION 'worker_claim_classified: a worker id is required' USING ERRCODE = 'AL002';
	END IF;
	IF airlock._class_rank(cls) IS NULL THEN
		RAISE EXCEPTION 'worker_claim_classified: unknown class %', cls USING ERRCODE = 'AL002';
	END IF;
	IF confinement IS NOT NULL AND confinement NOT IN ('none', 'user', 'root') THEN
		RAISE EXCEPTION 'worker_claim_classified: confinement "%" is not none, user or root', confinement
			USING ERRCODE = 'AL002';
	END IF;
	SELECT * INTO e FROM airlock.executions x
	WHERE x.id = exec_id AND x.state = 'received' AND x.kind = 'run' AND x.claimed_by IS NULL
	  AND x.run_after <= now()
	FOR UPDATE SKIP LOCKED;
	IF NOT FOUND OR seen IS NULL OR seen IS DISTINCT FROM airlock._wake_doc(e) THEN
		RETURN;
	END IF;
	final := CASE WHEN airlock._class_rank(e.declared_risk) > airlock._class_rank(cls)
		      THEN e.declared_risk ELSE cls END;
	new_state := CASE WHEN airlock._class_rank(final) <= 1 THEN 'queued' ELSE 'pending_approval' END;
	go := confinement IS NOT NULL AND final = 'read_only';
	IF go AND confinement = 'none' THEN
		RAISE EXCEPTION 'execution %: an observation that no human approved runs in the jail', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	PERFORM pg_advisory_lock(exec_id);
	UPDATE airlock.executions x SET claimed_by = worker, lease_until = NULL, class = final,
		reasons = worker_claim_classified.reasons,
		policy_version = p_policy_version,
		classifier_version = worker_claim_classified.classifier_version,
		rewind_status = worker_claim_classified.rewind_status,
		rewind_possible = p_rewind_possible,
		payload_hash = airlock._payload_hash(e.target, e.command, final, p_policy_version),
		classified_at = now(),
		state = CASE WHEN go THEN 'running' ELSE new_state END,
		started_at = CASE WHEN go THEN now() ELSE x.started_at END,
		confinement = CASE WHEN go THEN worker_claim_classified.confinement ELSE x.confinement END
	WHERE x.id = exec_id;
	IF new_state = 'pending_approval' THEN
		PERFORM airlock._hold_for_approval(exec_id, final);
	END IF;
	PERFORM airlock._event(exec_id, 'received', new_state, jsonb_build_object('class', final,
		'classified', cls, 'declared_risk', e.declared_risk, 'reasons', reasons,
		'policy_version', p_policy_version, 'classifier_version', classifier_version,
		'rewind_status', rewind_status, 'worker', worker));
	IF go THEN
		PERFORM airlock._event(exec_id, 'queued', 'running', jsonb_build_object('worker', worker,
			'rewind_points', NULL, 'guard', NULL, 'confinement', confinement));
	END IF;
	RETURN QUERY
		SELECT x.id, x.state, x.target, x.target_type, x.command, x.declared_risk, x.change_id,
		       x.action, x.requested_by, x.class, x.policy_version, x.rewind_possible, x.attempts,
		       t.vmid, h.slug, h.address, h.port, h.ssh_user, h.host_key_fingerprint,
		       t.zerto_vm_identifier, x.kind
		FROM airlock.executions x
		JOIN airlock.entities t ON t.slug = x.target
		JOIN airlock.entities h ON h.slug = coalesce(t.node, t.slug)
		WHERE x.id = exec_id;
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION
	airlock.worker_claim_classified(text, bigint, jsonb, text, jsonb, bigint, text, text, boolean, text)
TO airlock_worker;
