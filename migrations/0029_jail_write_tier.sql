-- 0029_jail_write_tier.sql -- the jail helper: reversible_low runs confined
-- to its claim, and each row records what the jail said it applied.
--
-- * confinement gains 'write': a reversible_low change nobody approved runs
--   as uid 0 without capabilities with only its verdict's write set writable;
--   and 'action': a reversible_low change that is one action of a policy
--   rule the kernel cannot confine (a service restart) runs as its rule
--   proves it, unconfined.  worker_confine refuses 'none' for such a row as
--   it does for an observation, and 'action' for any other class.
-- * executions.jail holds the jail's own account of the run (its ready
--   line: uid, network, limits, e.g. "uid=1610630711 net=own limits=cgroup2
--   mem=512MiB tasks=256 cpu=100% scratch=64MiB"), set by the worker while
--   the row runs (worker_jail).
-- * worker_needs_human: a queued change that cannot be confined (its write
--   set is known only at run time, or it is an action the kernel cannot
--   confine to paths) goes to a human before anything is done for it.

DO $$
DECLARE
	c text;
BEGIN
	FOR c IN SELECT conname FROM pg_catalog.pg_constraint
	         WHERE conrelid = 'airlock.executions'::regclass AND contype = 'c'
	           AND pg_catalog.pg_get_constraintdef(oid) LIKE '%confinement%'
	LOOP
		EXECUTE format('ALTER TABLE airlock.executions DROP CONSTRAINT %I', c);
	END LOOP;
END
$$;
ALTER TABLE airlock.executions ADD CONSTRAINT executions_confinement_check
	CHECK (confinement IN ('none', 'user', 'root', 'write', 'action'));
COMMENT ON COLUMN airlock.executions.confinement IS
	'How the command ran on its target: none (as approved), user (the jail''s user tier: a uid of its own), root (uid 0 without capabilities), write (reversible_low: uid 0 without capabilities, only the verdict''s write set writable), action (reversible_low: one action of a policy rule, run unconfined as the rule proves it).';

ALTER TABLE airlock.executions ADD COLUMN IF NOT EXISTS jail text;
COMMENT ON COLUMN airlock.executions.jail IS
	'The jail''s own account of a confined run (its ready line): the uid, the network (own or target), which limits applied (cgroup2, cgroup1, rlimit) and their values.';

CREATE OR REPLACE FUNCTION airlock.worker_confine(exec_id bigint, worker text, confinement text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
	IF confinement IS NULL OR confinement NOT IN ('none', 'user', 'root', 'write', 'action') THEN
		RAISE EXCEPTION 'worker_confine: confinement "%" is not none, user, root, write or action', confinement
			USING ERRCODE = 'AL002';
	END IF;
	IF confinement = 'action' AND (e.state = 'approved' OR e.class <> 'reversible_low') THEN
		RAISE EXCEPTION 'execution %: only an unapproved reversible_low change runs as an action rule', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	IF confinement = 'none' AND e.state <> 'approved' AND e.class = 'read_only' THEN
		RAISE EXCEPTION 'execution %: an observation that no human approved runs in the jail', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	IF confinement = 'none' AND e.state <> 'approved' AND e.class = 'reversible_low' THEN
		RAISE EXCEPTION 'execution %: a reversible_low change that no human approved runs in the jail', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	UPDATE airlock.executions x SET confinement = worker_confine.confinement WHERE x.id = exec_id;
END
$$;

-- worker_start (0012) with the same two confinements and rules as
-- worker_confine above.
CREATE OR REPLACE FUNCTION airlock.worker_start(exec_id bigint, worker text, rewind_points jsonb,
	guard jsonb, confinement text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	votes integer;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
	IF confinement IS NULL OR confinement NOT IN ('none', 'user', 'root', 'write', 'action') THEN
		RAISE EXCEPTION 'worker_start: confinement "%" is not none, user, root, write or action', confinement
			USING ERRCODE = 'AL002';
	END IF;
	IF confinement = 'none' AND e.state <> 'approved' AND e.class IN ('read_only', 'reversible_low') THEN
		RAISE EXCEPTION 'execution %: % that no human approved runs in the jail', exec_id,
			CASE e.class WHEN 'read_only' THEN 'an observation' ELSE 'a reversible_low change' END
			USING ERRCODE = 'AL008';
	END IF;
	IF confinement = 'action' AND (e.state = 'approved' OR e.class <> 'reversible_low') THEN
		RAISE EXCEPTION 'execution %: only an unapproved reversible_low change runs as an action rule', exec_id
			USING ERRCODE = 'AL008';
	END IF;
	IF e.state = 'approved' THEN
		SELECT count(*) INTO votes FROM airlock.approvals a
		WHERE a.execution_id = exec_id AND a.decision = 'approve' AND a.payload_hash = e.payload_hash;
		IF votes < greatest(e.approvals_required, 1) THEN
			RAISE EXCEPTION 'execution %: approvals do not match the payload', exec_id
				USING ERRCODE = 'AL008';
		END IF;
	ELSIF airlock._class_rank(e.class) > 1 THEN
		RAISE EXCEPTION 'execution %: % needs approval', exec_id, e.class USING ERRCODE = 'AL008';
	END IF;
	UPDATE airlock.executions x SET state = 'running', started_at = now(),
		rewind_points = worker_start.rewind_points, confinement = worker_start.confinement
	WHERE x.id = exec_id;
	PERFORM airlock._event(exec_id, e.state, 'running', jsonb_build_object('worker', worker,
		'rewind_points', rewind_points, 'guard', guard, 'confinement', confinement));
END
$$;

-- The jail's account of a running row (its ready line, without the prefix),
-- written in the statement that records the result, just before it
-- (store/queue.c).  A row no longer running under this worker is left
-- alone, never an error: the result that follows must still land.
CREATE FUNCTION airlock.worker_jail(exec_id bigint, worker text, facts text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	UPDATE airlock.executions x SET jail = left(facts, 300)
	WHERE x.id = exec_id AND x.claimed_by = worker AND x.state = 'running';
END
$$;

-- A queued row that cannot be confined as its class needs: to a human,
-- nothing done for it (no checkpoint, nothing sent).
CREATE FUNCTION airlock.worker_needs_human(exec_id bigint, worker text, reason text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued']);
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'worker_needs_human: a reason is required' USING ERRCODE = 'AL002';
	END IF;
	UPDATE airlock.executions x SET error = reason WHERE x.id = exec_id;
	PERFORM airlock._hold_for_approval(exec_id, e.class);
	PERFORM airlock._event(exec_id, 'queued', 'pending_approval', jsonb_build_object(
		'unconfinable', reason, 'nothing_ran', true, 'worker', worker));
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION
	airlock.worker_jail(bigint, text, text),
	airlock.worker_needs_human(bigint, text, text)
TO airlock_worker;
