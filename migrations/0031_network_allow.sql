-- 0031_network_allow.sql -- gate.yaml's network.allow reaches the workers.
--
-- The gate document `airlock seed` ingests now carries "network": {"allow":
-- [host globs]}: the destinations a proven harmless network read (an HTTP
-- GET or HEAD, ping, a DNS lookup, a plain SQL query) may reach and still be
-- judged below config_mutation.  It is stored with the rest of the document
-- (airlock.gate_policies.document) and read from there by the workers, which
-- build their classifier with it; a new gate version therefore tells them, on
-- the channel a new classifier policy uses.

CREATE OR REPLACE FUNCTION airlock.seed_gate(source text, origin text, doc jsonb) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	digest text := encode(sha256(convert_to(source, 'UTF8')), 'hex');
	cur airlock.gate_policies;
	v bigint;
BEGIN
	SELECT * INTO cur FROM airlock.gate_policies ORDER BY version DESC LIMIT 1;
	IF FOUND AND cur.sha256 = digest THEN
		RETURN cur.version;
	END IF;
	IF doc -> 'network' IS NOT NULL AND (jsonb_typeof(doc -> 'network') <> 'object'
	   OR jsonb_typeof(coalesce(doc -> 'network' -> 'allow', '[]')) <> 'array'
	   OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(doc -> 'network' -> 'allow', '[]')) e
	              WHERE jsonb_typeof(e) <> 'string')) THEN
		RAISE EXCEPTION 'gate policy: "network" must be {"allow": [host globs]}'
			USING ERRCODE = 'AL002';
	END IF;
	INSERT INTO airlock.gate_policies (sha256, source, origin, document)
	VALUES (digest, source, origin, doc) RETURNING version INTO v;
	PERFORM airlock._gate_apply(v, doc);
	-- workers rebuild their classifier with the new network.allow
	PERFORM pg_notify('airlock_policy', 'gate ' || v::text);
	RETURN v;
END
$$;

COMMENT ON FUNCTION airlock.seed_gate(text, text, jsonb) IS
	'Ingests a gate policy (seeds/gate.yaml, normalised by airlock seed); tells the workers.';
