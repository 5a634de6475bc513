-- 0023_hot_path.sql -- two costs that grew or repeated for no reason.
--
-- 1. Sealing costs the same whatever the chain's length.  PL/pgSQL keeps a generic plan for a statement after a few calls, and a
--    generic plan cannot know that `seq >= first_seq` selects a handful of
--    rows at the chain's end: 0018's check that a seal extends the chain
--    became a scan of every sealed event, so each batch cost more as the
--    history grew (about 18 ms for a batch of 50 events after 20,000
--    executions).  The check now asks for the chain's highest position
--    only, with the same guarantee (see below), and the sealer's own
--    statements are planned for the values of each call.
-- 2. The payload hash (0002) is PL/pgSQL, with the same output: as a SQL
--    function declared IMMUTABLE around convert_to (which is only STABLE)
--    it could not be inlined and was planned again at every call, about
--    0.15 ms per row classified.

CREATE OR REPLACE FUNCTION airlock._check_seals() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
DECLARE
	bad record;
	first_seq bigint;
	last_seq bigint;
	sealed bigint;
BEGIN
	SELECT c.id, c.seq,
	       CASE WHEN c.seq IS NULL OR c.hash IS NULL OR c.prev_hash IS NULL THEN 'the seal is incomplete'
		    WHEN c.hash <> c.want THEN 'its hash is not the hash of its content'
		    ELSE 'its prev_hash is not the hash of the event at the position before it' END AS why
	INTO bad
	FROM (SELECT n.id, n.seq, n.hash, n.prev_hash,
		     encode(sha256(convert_to(n.prev_hash || '|' || n.id || '|' || n.execution_id || '|' ||
			to_char(n.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' ||
			n.actor || '|' || coalesce(n.from_state, '') || '|' || n.to_state || '|' ||
			n.detail::text, 'UTF8')), 'hex') AS want,
		     CASE WHEN n.seq = 1 THEN repeat('0', 64)
			  ELSE (SELECT p.hash FROM airlock.execution_events p
				WHERE p.seq = n.seq - 1 AND p.seq IS NOT NULL) END AS link
	      FROM new_rows n) c
	WHERE c.seq IS NULL OR c.hash IS NULL OR c.prev_hash IS NULL OR c.hash <> c.want
	   OR c.link IS NULL OR c.prev_hash <> c.link
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'execution_events: event % cannot be sealed at chain position %: %',
			bad.id, bad.seq, bad.why USING ERRCODE = '42501';
	END IF;
	-- The positions this statement sealed are contiguous and the chain's
	-- highest position is the last of them: an event sealed earlier beyond
	-- them would be higher, one inside their range would have collided on
	-- the unique index, and the link check above ties the first to the
	-- chain.  One index probe, whatever the chain's length.
	SELECT min(n.seq), max(n.seq), count(*) INTO first_seq, last_seq, sealed FROM new_rows n;
	IF sealed > 0 AND (last_seq - first_seq + 1 <> sealed
	    OR (SELECT max(x.seq) FROM airlock.execution_events x) <> last_seq) THEN
		RAISE EXCEPTION 'execution_events: a seal at chain position % does not extend the chain: its positions are not contiguous, or events after them are already sealed',
			first_seq USING ERRCODE = '42501';
	END IF;
	RETURN NULL;
END
$$;

-- A few statements per batch: planning them for the batch at hand costs
-- little, and no plan made for other values can scan the whole history.
ALTER FUNCTION airlock.seal_events(integer) SET plan_cache_mode = force_custom_plan;

CREATE OR REPLACE FUNCTION airlock._payload_hash(target text, command text, class text,
	policy_version bigint)
RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	RETURN encode(sha256(convert_to(target || E'\n' || class || E'\n' || policy_version || E'\n'
		|| command, 'UTF8')), 'hex');
END
$$;
