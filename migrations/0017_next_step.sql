-- 0017_next_step.sql -- the agent's "what to do now" has one source: this
-- function.  airlock-mcp and the CLI pass it on as it is, so the sentences
-- they used to add themselves are said here: the rule against going around
-- airlock after a request ended without running or without success, and, for
-- a request waiting for a decision, how an operator decides it and what
-- happens when nobody does.

ALTER FUNCTION airlock._next_step_plain(airlock.executions) RENAME TO _next_step_core;

CREATE FUNCTION airlock._next_step_plain(e airlock.executions) RETURNS text
LANGUAGE sql STABLE SET search_path = airlock, pg_temp AS $$
	SELECT airlock._next_step_core(e) || CASE
	WHEN e.state = 'pending_approval' THEN
		' An operator reads it with airlock show ' || e.id || ', then decides with airlock approve '
		|| e.id || ' or airlock reject ' || e.id || '. If nobody decides before it expires, it expires'
		|| ' and nothing runs.'
	WHEN e.state IN ('failed', 'timed_out', 'outcome_unknown', 'rejected', 'expired', 'refused') THEN
		' Do not go around airlock: no raw SSH, no other tool or channel, not even to check. If it is'
		|| ' urgent, ask your operator.'
	ELSE ''
	END
$$;

SELECT airlock._secure_new_objects();
