-- 0034_shell_attribute.sql -- the shell each target runs commands under is a
-- scheduler-owned attribute.
--
-- Every command runs under bash with no startup files (transport/shell.h);
-- the probe asks each target what /bin/bash and /bin/sh are.  Until now only
-- a `shell` check row said it; the attribute `shell` ({"state": "bash" |
-- "none", "path", "version", "sh"}) lets get_health_summary show it beside
-- `confinement`, and only the scheduler may write it.
-- get_health_summary is 0030's, with the one `shell` line added.

INSERT INTO airlock.scheduler_keys (key, reason) VALUES
	('shell', 'shell is scheduler-owned (probed: the bash every command runs under, or none); attribute ignored. Use get_health_summary to observe it.')
ON CONFLICT (key) DO NOTHING;

CREATE OR REPLACE FUNCTION airlock.get_health_summary(slug text DEFAULT NULL) RETURNS SETOF jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
BEGIN
	IF slug IS NOT NULL AND (NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = get_health_summary.slug)
				 OR NOT airlock._sees(get_health_summary.slug)) THEN
		PERFORM airlock._unknown_entity('get_health_summary', get_health_summary.slug);
	END IF;
	RETURN QUERY
		SELECT jsonb_strip_nulls(jsonb_build_object('slug', e.slug, 'type', e.type, 'node', e.node,
			'health', e.attributes ->> 'health',
			'qemu_guest_agent', CASE WHEN e.type = 'vm' THEN coalesce(e.attributes ->> 'qemu_guest_agent', 'unknown') END,
			'container_status', CASE WHEN e.type = 'lxc' THEN coalesce(e.attributes ->> 'container_status', 'unknown') END,
			'reachable', e.attributes -> 'reachable',
			'confinement', coalesce(e.attributes ->> 'confinement', 'unknown'),
			'shell', coalesce(e.attributes -> 'shell', '"unknown"'::jsonb),
			'checks_ok', (SELECT count(*) FROM airlock.checks c WHERE c.entity = e.slug AND c.status = 'ok'),
			'checks_failing', (SELECT count(*) FROM airlock.checks c WHERE c.entity = e.slug AND c.status IN ('failing', 'warning')),
			'last_probe', (SELECT max(c.probed_at) FROM airlock.checks c WHERE c.entity = e.slug)))
		FROM airlock.entities e
		WHERE (get_health_summary.slug IS NULL OR e.slug = get_health_summary.slug)
		  AND airlock._sees(e.slug, e.type)
		ORDER BY e.slug;
END
$$;
