-- 0010_schema_version.sql -- which migrations are applied, readable by every airlock role.
--
-- airlockd refuses to start on a schema older or newer than the one it was
-- built with, and `airlock doctor` reports the same for whoever runs it.
-- Both run as logins without any right on airlock.schema_migrations (the table
-- belongs to the administrator who ran `airlock migrate`), so they read the
-- list through this function.  It returns names and times only.

GRANT SELECT ON airlock.schema_migrations TO airlock_owner;

CREATE FUNCTION airlock.schema_version() RETURNS TABLE (name text, applied_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
	SELECT m.name, m.applied_at FROM airlock.schema_migrations m ORDER BY m.name
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION airlock.schema_version()
TO airlock_agent, airlock_operator, airlock_worker, airlock_scheduler;
