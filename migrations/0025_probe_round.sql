-- 0025_probe_round.sql -- a probe round's records in one statement.
--
-- The scheduler records what a round saw of every entity: with one
-- record_probe() call each, a node with 500 guests cost 500 round trips and
-- 500 transactions per round.  record_probes() takes the whole round's
-- records at once, with record_probe()'s rules for each: only
-- scheduler-owned attribute keys, checks upserted by (entity, name).  The
-- whole list is checked before anything is written; a malformed entry
-- fails the call and writes nothing.  An entity that no longer exists (the
-- inventory was seeded while the round ran) is skipped and named in the
-- result, so that it does not cost the others their records.

-- probes: [{slug, attributes: {...}, checks: [{name, status, detail}]}]
-- (checks may be left out).  Returns the slugs it did not know.
CREATE FUNCTION airlock.record_probes(probes jsonb) RETURNS text[]
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	bad text;
	unknown text[];
BEGIN
	IF probes IS NULL OR jsonb_typeof(probes) <> 'array' THEN
		RAISE EXCEPTION 'record_probes: probes must be a JSON array of {slug, attributes, checks}'
			USING ERRCODE = 'AL002';
	END IF;
	SELECT CASE
		WHEN jsonb_typeof(x) <> 'object' THEN format('entry %s is not an object', i)
		WHEN jsonb_typeof(x -> 'slug') IS DISTINCT FROM 'string'
		THEN format('entry %s has no slug (a string)', i)
		WHEN jsonb_typeof(x -> 'attributes') IS DISTINCT FROM 'object'
		THEN format('the attributes of "%s" must be a JSON object', x ->> 'slug')
		WHEN x ? 'checks' AND jsonb_typeof(x -> 'checks') <> 'array'
		THEN format('the checks of "%s" must be a JSON array', x ->> 'slug') END
	INTO bad
	FROM jsonb_array_elements(probes) WITH ORDINALITY p(x, i)
	WHERE jsonb_typeof(x) <> 'object' OR jsonb_typeof(x -> 'slug') IS DISTINCT FROM 'string'
	   OR jsonb_typeof(x -> 'attributes') IS DISTINCT FROM 'object'
	   OR (x ? 'checks' AND jsonb_typeof(x -> 'checks') <> 'array')
	ORDER BY i LIMIT 1;
	IF bad IS NULL THEN
		SELECT format('"%s" appears more than once', x ->> 'slug') INTO bad
		FROM jsonb_array_elements(probes) x GROUP BY x ->> 'slug' HAVING count(*) > 1
		ORDER BY x ->> 'slug' LIMIT 1;
	END IF;
	IF bad IS NULL THEN
		SELECT format('"%s" is not a scheduler-owned key (entity "%s")', k, x ->> 'slug') INTO bad
		FROM jsonb_array_elements(probes) WITH ORDINALITY p(x, i),
		     jsonb_object_keys(x -> 'attributes') k
		WHERE NOT EXISTS (SELECT 1 FROM airlock.scheduler_keys s WHERE s.key = k)
		ORDER BY i LIMIT 1;
	END IF;
	IF bad IS NULL THEN
		SELECT format('a check of "%s" needs a name and a status (ok, warning, failing, unknown)',
			      x ->> 'slug') INTO bad
		FROM jsonb_array_elements(probes) WITH ORDINALITY p(x, i),
		     jsonb_array_elements(coalesce(x -> 'checks', '[]')) c
		WHERE jsonb_typeof(c) <> 'object' OR jsonb_typeof(c -> 'name') IS DISTINCT FROM 'string'
		   OR coalesce(c ->> 'status', '') NOT IN ('ok', 'warning', 'failing', 'unknown')
		ORDER BY i LIMIT 1;
	END IF;
	IF bad IS NOT NULL THEN
		RAISE EXCEPTION 'record_probes: %', bad USING ERRCODE = 'AL002';
	END IF;

	SELECT coalesce(array_agg(x ->> 'slug' ORDER BY i), '{}') INTO unknown
	FROM jsonb_array_elements(probes) WITH ORDINALITY p(x, i)
	WHERE NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = x ->> 'slug');
	-- The rows in one order, whoever else writes several of them at once.
	PERFORM 1 FROM airlock.entities e
	WHERE e.slug IN (SELECT x ->> 'slug' FROM jsonb_array_elements(probes) x)
	ORDER BY e.id FOR NO KEY UPDATE;
	UPDATE airlock.entities e SET attributes = e.attributes || p.attributes, updated_at = now()
	FROM (SELECT x ->> 'slug' AS slug, x -> 'attributes' AS attributes
	      FROM jsonb_array_elements(probes) x) p
	WHERE e.slug = p.slug AND NOT (e.attributes @> p.attributes);
	-- A check named twice for one entity: the last one, as record_probe().
	INSERT INTO airlock.checks AS k (entity, name, status, detail, probed_at)
	SELECT DISTINCT ON (x ->> 'slug', c ->> 'name') x ->> 'slug', c ->> 'name', c ->> 'status',
	       c ->> 'detail', now()
	FROM jsonb_array_elements(probes) x,
	     jsonb_array_elements(coalesce(x -> 'checks', '[]')) WITH ORDINALITY cc(c, j)
	WHERE EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = x ->> 'slug')
	ORDER BY x ->> 'slug', c ->> 'name', j DESC
	ON CONFLICT (entity, name) DO UPDATE
		SET status = EXCLUDED.status, detail = EXCLUDED.detail, probed_at = EXCLUDED.probed_at;
	RETURN unknown;
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION airlock.record_probes(jsonb) TO airlock_scheduler;
