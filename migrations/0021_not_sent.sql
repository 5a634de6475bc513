-- 0021_not_sent.sql -- a row marked running whose command was never sent.
--
-- The live check right before executing rides on the command's own SSH
-- channel (docs/transport.md): for a host, the node's pooled session is
-- checked without a channel and the channel that carries the command is the
-- rest of the check; for a container, `pct status` runs on that channel and
-- pct exec starts only when the container runs; for a VM, the agent ping
-- does the same.  So the row is already marked running (durably, before a
-- byte is sent) when the transport finds the node unreachable or the target
-- unable to run anything.  When the transport is certain that nothing was
-- sent -- no exec request reached the node, or the check in front of the
-- command refused it -- the row must not end as failed or outcome_unknown:
--   * the node could not be reached: the row goes back to the state it was
--     started from, to be retried after a delay, exactly as a row whose node
--     could not be reached before it started (worker_unreachable): one
--     attempt more, refused once the request's deadline has passed;
--   * the target refused (container stopped, guest agent dead): refused,
--     with the same sentence the check before the start gives.
-- A command that may have been sent is never handed to this function: its
-- row ends as the transport saw it (outcome_unknown when it cannot tell),
-- and is never re-run automatically.

INSERT INTO airlock.transitions (from_state, to_state) VALUES
	('running', 'queued'), ('running', 'approved'), ('running', 'refused')
ON CONFLICT DO NOTHING;

-- retry_in_ms: the delay before the next attempt when the node could not be
-- reached; NULL when the target refused (refused at once).  reason is what
-- the agent and the operator read.  Returns the row's new state ('queued',
-- 'approved' or 'refused').
CREATE FUNCTION airlock.worker_not_sent(exec_id bigint, worker text, reason text,
	retry_in_ms integer)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	e airlock.executions;
	before text;
	deadline timestamptz;
	first_failure timestamptz;
	why text;
BEGIN
	e := airlock._held(exec_id, worker, ARRAY['running']);
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'worker_not_sent: a reason is required' USING ERRCODE = 'AL002';
	END IF;
	IF retry_in_ms IS NOT NULL AND retry_in_ms < 0 THEN
		RAISE EXCEPTION 'worker_not_sent: retry_in_ms must not be negative' USING ERRCODE = 'AL002';
	END IF;
	SELECT v.from_state INTO before FROM airlock.execution_events v
	WHERE v.execution_id = exec_id AND v.to_state = 'running'
	  AND v.from_state IN ('queued', 'approved')
	ORDER BY v.id DESC LIMIT 1;
	IF before IS NULL THEN
		RAISE EXCEPTION 'execution %: no start to go back from', exec_id USING ERRCODE = 'AL005';
	END IF;
	deadline := airlock._run_deadline(e);
	IF retry_in_ms IS NOT NULL AND now() < deadline THEN
		UPDATE airlock.executions x SET state = before, claimed_by = NULL, started_at = NULL,
			confinement = NULL, rewind_points = NULL, error = reason,
			attempts = x.attempts + 1,
			run_after = now() + least(make_interval(secs => retry_in_ms / 1000.0),
				airlock._max_retry_delay())
		WHERE x.id = exec_id;
		PERFORM airlock._event(exec_id, 'running', before, jsonb_build_object(
			'not_sent', true, 'nothing_ran', true, 'released', reason, 'unreachable', true,
			'retry_in_ms', retry_in_ms, 'deadline', deadline, 'worker', worker));
		PERFORM pg_advisory_unlock(exec_id);
		RETURN before;
	END IF;
	IF retry_in_ms IS NOT NULL THEN
		SELECT min(v.at) INTO first_failure FROM airlock.execution_events v
		WHERE v.execution_id = exec_id AND v.detail->>'unreachable' = 'true';
		why := format('%s: still unreachable when the request''s deadline passed (%s; %s attempts '
			'since %s). Nothing ran.', reason,
			to_char(deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), e.attempts + 1,
			to_char(coalesce(first_failure, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
	ELSE
		why := reason;
	END IF;
	UPDATE airlock.executions x SET state = 'refused', error = why, finished_at = now(),
		claimed_by = NULL, started_at = NULL, confinement = NULL, rewind_points = NULL,
		attempts = x.attempts + CASE WHEN retry_in_ms IS NULL THEN 0 ELSE 1 END
	WHERE x.id = exec_id;
	PERFORM airlock._event(exec_id, 'running', 'refused', jsonb_build_object(
		'not_sent', true, 'nothing_ran', true, 'reason', why, 'worker', worker)
		|| CASE WHEN retry_in_ms IS NULL THEN '{}'::jsonb
			ELSE jsonb_build_object('unreachable', true) END);
	PERFORM pg_advisory_unlock(exec_id);
	RETURN 'refused';
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION airlock.worker_not_sent(bigint, text, text, integer) TO airlock_worker;
