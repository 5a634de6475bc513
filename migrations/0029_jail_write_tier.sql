-- 0029_jail_write_tier.sql -- the jail helper: reversible_low runs confined
-- to its claim, and each row records what the jail said it applied.
--
-- * confinement gains 'write': a reversible_low change nobody approved runs
--   as uid 0 without capabilities with only its verdict's write set writable.
--   worker_confine refuses 'none' for such a row as it does for an
--   observation.
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
	CHECK (confinement IN ('none', 'user', 'root', 'write'));
COMMENT ON COLUMN airlock.executions.confinement IS
	'How the command ran on its target: none (as approved), user (the jail''s user tier: a uid of its own), root (uid 0 without capabilities), write (reversible_low: uid 0 without capabilities, only the verdict''s write set writable).';

ALTER TABLE airlock.executions ADD COLUMN IF NOT EXISTS jail text;
COMMENT ON COLUMN airlock.executions.jail IS
	'The jail''s own account of a confined run (its ready line): the uid, the network (own or target), which limits applied (cgroup2, cgroup1, rlimit) and their values.';

CREATE OR REPLACE FUNCTION airlock.worker_confine(exec_id bigint, worker text, confinement text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['queued', 'approved']);
	IF confinement IS NULL OR confinement NOT IN ('none', 'user', 'root', 'write') THEN
		RAISE EXCEPTION 'worker_confine: confinement "%" is not none, user, root or write', confinement
			USING ERRCODE = 'AL002';
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

-- The jail's account of a running row (its ready line, without the prefix).
CREATE FUNCTION airlock.worker_jail(exec_id bigint, worker text, facts text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	PERFORM airlock._held(exec_id, worker, ARRAY['running']);
	UPDATE airlock.executions x SET jail = left(facts, 300) WHERE x.id = exec_id;
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
