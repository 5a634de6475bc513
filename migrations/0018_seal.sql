-- 0018_seal.sql -- the audit chain leaves the hot path: events are written
-- unsealed and sealed into the chain in batches by one sealer.
--
-- Until now every event insert took the chain's advisory lock and held it to
-- its transaction's commit (WAL flush included), so every transaction that
-- wrote an event queued behind the one before it, across every daemon.
--
-- 1. An event is inserted unsealed: an id from the sequence and its time, and
--    seq, prev_hash and hash all NULL.  No lock, no read of another row.
-- 2. airlock.seal_events(max) seals the oldest unsealed committed events, in
--    id order, in one transaction: each gets the next chain position (seq),
--    prev_hash (the hash of the event at seq - 1) and its hash.  It takes the
--    chain's lock with pg_try_advisory_xact_lock, so one sealer runs at a
--    time and the others skip.  airlockd calls it every audit.seal_every_ms.
-- 3. The chain's order is seq, not id: ids come from a sequence and no longer
--    follow commit order.  Events from before this migration keep their
--    hashes and take their id as their position, so anchors signed before
--    it still name the same events.  The hash formula is unchanged.
-- 4. Events stay append-only.  The one UPDATE allowed is a seal: an unsealed
--    event gets seq, prev_hash and hash with its content unchanged, and the
--    seal is checked in the database (the hash matches the content, the link
--    matches the event before it, the position extends the chain), whoever
--    issues it.  No role can use it to change content or forge a hash.

-- ---------------------------------------------------------------- columns, positions, indexes

ALTER TABLE airlock.execution_events ADD COLUMN seq bigint;
ALTER TABLE airlock.execution_events ALTER COLUMN prev_hash DROP NOT NULL,
	ALTER COLUMN hash DROP NOT NULL;

-- Events already chained take their id as their chain position.  The
-- append-only trigger would refuse this; a superuser applies migrations.
ALTER TABLE airlock.execution_events DISABLE TRIGGER execution_events_no_update;
UPDATE airlock.execution_events SET seq = id;
ALTER TABLE airlock.execution_events ENABLE TRIGGER execution_events_no_update;

ALTER TABLE airlock.execution_events ADD CONSTRAINT execution_events_sealed_whole
	CHECK ((seq IS NULL) = (hash IS NULL) AND (seq IS NULL) = (prev_hash IS NULL));
-- The chain, in order.  Unsealed events are not in it.
CREATE UNIQUE INDEX execution_events_seq ON airlock.execution_events (seq) WHERE seq IS NOT NULL;
-- The sealer's work list: small, since events are sealed within moments.
CREATE INDEX execution_events_unsealed ON airlock.execution_events (id) WHERE seq IS NULL;
COMMENT ON COLUMN airlock.execution_events.seq IS
	'Position in the hash chain, set by the sealer (NULL until sealed); the chain''s order.';
COMMENT ON TABLE airlock.execution_events IS
	'Append-only history of every transition, hash-chained in seq order by the sealer: hash = sha256(prev_hash | content).';

-- ---------------------------------------------------------------- insert: unsealed, no lock

CREATE OR REPLACE FUNCTION airlock._chain_event() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	NEW.id := nextval('airlock.execution_events_id_seq');
	NEW.at := clock_timestamp();
	-- A new event is never sealed by its writer: the sealer chains it.
	NEW.seq := NULL;
	NEW.prev_hash := NULL;
	NEW.hash := NULL;
	RETURN NEW;
END
$$;

-- ---------------------------------------------------------------- update: a seal and nothing else

-- Row by row, before the update: only an unsealed event may change, only its
-- seal columns, and only to a full seal.  What the seal says is checked
-- after the statement (_check_seals), all rows at once.
CREATE FUNCTION airlock._events_append_only() RETURNS trigger
LANGUAGE plpgsql SET search_path = airlock, pg_temp AS $$
BEGIN
	IF TG_OP <> 'UPDATE' THEN
		RAISE EXCEPTION 'execution_events is append-only: % is not allowed', TG_OP
			USING ERRCODE = '42501';
	END IF;
	IF OLD.seq IS NOT NULL THEN
		RAISE EXCEPTION 'execution_events is append-only: UPDATE is not allowed (event % is sealed at chain position %)',
			OLD.id, OLD.seq USING ERRCODE = '42501';
	END IF;
	IF NEW.seq IS NULL OR NEW.prev_hash IS NULL OR NEW.hash IS NULL THEN
		RAISE EXCEPTION 'execution_events is append-only: UPDATE is not allowed (event % is unsealed; the only change allowed is its seal: seq, prev_hash and hash together)',
			OLD.id USING ERRCODE = '42501';
	END IF;
	IF (NEW.id, NEW.execution_id, NEW.at, NEW.actor, NEW.from_state, NEW.to_state, NEW.detail::text)
	   IS DISTINCT FROM
	   (OLD.id, OLD.execution_id, OLD.at, OLD.actor, OLD.from_state, OLD.to_state, OLD.detail::text) THEN
		RAISE EXCEPTION 'execution_events is append-only: UPDATE is not allowed (sealing event % may not change its content)',
			OLD.id USING ERRCODE = '42501';
	END IF;
	RETURN NEW;
END
$$;
DROP TRIGGER execution_events_no_update ON airlock.execution_events;
CREATE TRIGGER execution_events_no_update BEFORE UPDATE OR DELETE ON airlock.execution_events
	FOR EACH ROW EXECUTE FUNCTION airlock._events_append_only();

-- After each UPDATE statement: every row it changed is a correct seal.  Its
-- hash is the hash of its content and prev_hash; its prev_hash is the hash
-- of the event at seq - 1 (64 zeros at position 1, with nothing before it);
-- and the statement's positions follow one another up to the chain's
-- highest, so a seal extends the chain and never fills a hole.  That the row
-- was unsealed and its content is unchanged, the row trigger has checked.
-- Each row is checked on its own (one index probe for its link), and the
-- batch with one more probe, so a batch costs time in proportion to its
-- size, whatever the chain's length.
CREATE FUNCTION airlock._check_seals() RETURNS trigger
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
CREATE TRIGGER execution_events_seal_check AFTER UPDATE ON airlock.execution_events
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION airlock._check_seals();

-- ---------------------------------------------------------------- the sealer

-- Seals up to `max` of the oldest unsealed committed events, in id order, in
-- the caller's transaction, and returns how many.  0 when there is nothing to
-- seal or when another session is sealing (it holds the chain's lock; the
-- caller skips rather than waits).  The content part of each hash is built
-- in one query; the chain itself (each hash covers the one before) in a
-- loop over text; the rows are written by one UPDATE.  Its statements are
-- planned for each call's values: a plan kept for other values could scan
-- the whole history.
CREATE FUNCTION airlock.seal_events(max integer DEFAULT 1000) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp
SET plan_cache_mode = force_custom_plan AS $$
DECLARE
	head_seq bigint;
	head_hash text;
	ids bigint[];
	rest text[];
	seqs bigint[];
	prevs text[];
	hashes text[];
	n integer;
BEGIN
	IF max IS NULL OR max < 1 OR max > 100000 THEN
		RAISE EXCEPTION 'seal_events: max must be between 1 and 100000, not %', coalesce(max::text, 'NULL')
			USING ERRCODE = 'AL002';
	END IF;
	IF NOT pg_try_advisory_xact_lock(74287730, 1) THEN
		RETURN 0;
	END IF;
	-- A seal that commits may be anchored at once; one that a crash then
	-- loses would read as a truncation.  So it is durable before it counts,
	-- whatever the session's setting (a stronger one is kept).
	IF current_setting('synchronous_commit') IN ('off', 'local') THEN
		PERFORM set_config('synchronous_commit', 'on', true);
	END IF;
	SELECT e.seq, e.hash INTO head_seq, head_hash FROM airlock.execution_events e
	WHERE e.seq IS NOT NULL ORDER BY e.seq DESC LIMIT 1;
	SELECT array_agg(u.id ORDER BY u.id),
	       array_agg(u.id || '|' || u.execution_id || '|' ||
			to_char(u.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' ||
			u.actor || '|' || coalesce(u.from_state, '') || '|' || u.to_state || '|' ||
			u.detail::text ORDER BY u.id)
	INTO ids, rest
	FROM (SELECT e.* FROM airlock.execution_events e WHERE e.seq IS NULL ORDER BY e.id LIMIT max) u;
	n := coalesce(array_length(ids, 1), 0);
	IF n = 0 THEN
		RETURN 0;
	END IF;
	head_seq := coalesce(head_seq, 0);
	head_hash := coalesce(head_hash, repeat('0', 64));
	FOR i IN 1 .. n LOOP
		seqs[i] := head_seq + i;
		prevs[i] := head_hash;
		head_hash := encode(sha256(convert_to(head_hash || '|' || rest[i], 'UTF8')), 'hex');
		hashes[i] := head_hash;
	END LOOP;
	UPDATE airlock.execution_events e SET seq = u.seq, prev_hash = u.prev_hash, hash = u.hash
	FROM unnest(ids, seqs, prevs, hashes) AS u(id, seq, prev_hash, hash)
	WHERE e.id = u.id AND e.seq IS NULL;
	RETURN n;
END
$$;

-- ---------------------------------------------------------------- verification

-- Walks the sealed events in chain order, reports the unsealed tail (how
-- many, how old the oldest; not a fault: the sealer has not reached them
-- yet), then checks every row against its latest record, sealed or not.
-- first_broken is NULL when everything holds; 0 when the problem is a row
-- with no record at all.
DROP FUNCTION airlock.audit_verify();
CREATE FUNCTION airlock.audit_verify(OUT checked bigint, OUT first_broken bigint, OUT detail text,
	OUT unsealed bigint, OUT oldest_unsealed_s double precision)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ev airlock.execution_events;
	prev text := repeat('0', 64);
	bad record;
BEGIN
	checked := 0;
	SELECT count(*), extract(epoch FROM now() - min(e.at)) INTO unsealed, oldest_unsealed_s
	FROM airlock.execution_events e WHERE e.seq IS NULL;
	FOR ev IN SELECT * FROM airlock.execution_events e WHERE e.seq IS NOT NULL ORDER BY e.seq LOOP
		IF ev.prev_hash <> prev THEN
			first_broken := ev.id;
			detail := format('event %s (chain position %s): prev_hash does not match the hash of the event before it (a row was removed or reordered)', ev.id, ev.seq);
			RETURN;
		END IF;
		IF ev.hash <> airlock._event_hash(ev) THEN
			first_broken := ev.id;
			detail := format('event %s (chain position %s): content does not match its hash (the row was altered)', ev.id, ev.seq);
			RETURN;
		END IF;
		prev := ev.hash;
		checked := checked + 1;
	END LOOP;
	SELECT * INTO bad FROM airlock._audit_records() LIMIT 1;
	IF FOUND THEN
		first_broken := bad.event_id;
		detail := bad.problem;
	END IF;
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION airlock.audit_verify() TO airlock_operator, airlock_worker;
GRANT EXECUTE ON FUNCTION airlock.seal_events(integer) TO airlock_operator, airlock_worker;
