-- 0022_notify_requeue.sql -- a row that goes back to `approved` because its
-- command was never sent (worker_not_sent) is not announced as approved a
-- second time.
--
-- As in 0014, with one exception: running -> approved is the same approval
-- waiting for a retry, not a new decision.

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
