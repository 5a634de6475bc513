-- 0022_notify_requeue.sql -- two messages that said the wrong thing.
--
-- 1. A row that goes back to `approved` because its command was never sent
--    (worker_not_sent) is not announced as approved a second time: as in
--    0014, except that running -> approved is the same approval waiting for
--    a retry, not a new decision.
-- 2. A recovery on a guest that discovery found gone says that it is gone
--    (AL016, as run() does), not that its guest agent is not running.

CREATE OR REPLACE FUNCTION airlock._notify_state() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF NEW.state = 'approved' AND OLD.state = 'running' THEN
		RETURN NULL;
	END IF;
	IF NEW.state IN ('pending_approval', 'approved', 'rejected', 'expired', 'refused',
	                 'outcome_unknown')
	   OR (NEW.state IN ('succeeded', 'failed', 'timed_out', 'cancelled')
	       AND (NEW.class IS DISTINCT FROM 'read_only' OR NEW.approvals_required > 0
	            OR NEW.decided_at IS NOT NULL)) THEN
		INSERT INTO airlock.notifications (execution_id, event) VALUES (NEW.id, NEW.state);
	END IF;
	RETURN NULL;
END
$$;

-- As in 0015, but a gone guest is refused with the pre-flight's own words.
CREATE OR REPLACE FUNCTION airlock.recover(vm text, paths text[], from_execution bigint DEFAULT NULL,
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
	IF pf.sqlstate = 'AL016' THEN
		RAISE EXCEPTION '%', regexp_replace(pf.message, '^run on ', 'recover on ')
			USING ERRCODE = pf.sqlstate;
	ELSIF pf.sqlstate IS NOT NULL THEN
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
