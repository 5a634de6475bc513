-- 0016_discovery.sql -- the estate follows the cluster.
--
-- The scheduler asks every node for the cluster's guests (pvesh get
-- /cluster/resources) and records the answers with record_discovery():
-- a guest nobody listed before appears, a guest listed on another node
-- moves there (entities.node is then the scheduler's: a later inventory
-- seed does not move it back), and a guest missing from the answer of the
-- node it was on is marked gone -- never deleted, because executions and
-- relationships name it.  A run on a gone guest is refused before any row
-- is written.  Every change is a row of estate_changes.
--
-- The inventory keeps what discovery cannot know: a host's address, port,
-- user and pinned host key, and, for a host whose name in the cluster is
-- not its slug's name, pve_node; a guest's slug (its alias), Zerto
-- identifier, attributes and relationships.

ALTER TABLE airlock.entities
	ADD COLUMN pve_node      text CHECK (pve_node ~ '^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$'),
	ADD COLUMN discovered_at timestamptz,
	ADD COLUMN gone_at       timestamptz,
	ADD CONSTRAINT pve_node_on_hosts CHECK (pve_node IS NULL OR type = 'proxmox-host'),
	ADD CONSTRAINT gone_only_guests CHECK (gone_at IS NULL OR type <> 'proxmox-host');
COMMENT ON COLUMN airlock.entities.pve_node IS
	'A host''s node name in the cluster (pvesh''s "node"); NULL: the slug''s name.';
COMMENT ON COLUMN airlock.entities.discovered_at IS
	'When discovery last listed this guest; NULL: never (the inventory''s node holds).';
COMMENT ON COLUMN airlock.entities.gone_at IS
	'When discovery found the guest missing from its node''s answer; NULL: present.';

CREATE TABLE airlock.estate_changes (
	id     bigserial PRIMARY KEY,
	at     timestamptz NOT NULL DEFAULT clock_timestamp(),
	entity text NOT NULL REFERENCES airlock.entities (slug),
	change text NOT NULL CHECK (change IN ('appeared', 'moved', 'gone', 'returned')),
	detail jsonb NOT NULL DEFAULT '{}'
);
COMMENT ON TABLE airlock.estate_changes IS
	'What discovery changed in the estate, one row per guest and change.';

-- The cluster name of a host entity.
CREATE FUNCTION airlock._pve_node_of(h airlock.entities) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(h.pve_node, split_part(h.slug, ':', 2))
$$;

-- A free slug for a guest discovery found: type:name when the name fits and
-- is free, else type:name-vmid, else type:vmid.
CREATE FUNCTION airlock._discovered_slug(typ text, name text, vmid integer) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = airlock, pg_temp AS $$
DECLARE
	cand text;
BEGIN
	FOREACH cand IN ARRAY ARRAY[typ || ':' || name, typ || ':' || left(name, 50) || '-' || vmid,
				    typ || ':' || vmid] LOOP
		IF cand ~ '^[a-z-]+:[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'
		   AND NOT EXISTS (SELECT 1 FROM airlock.entities e WHERE e.slug = cand) THEN
			RETURN cand;
		END IF;
	END LOOP;
	RAISE EXCEPTION 'record_discovery: no free slug for % %', typ, vmid USING ERRCODE = 'AL002';
END
$$;

-- Records one round of discovery.  answered: the cluster names of the
-- nodes whose answer is in guests; guests: [{type: "qemu"|"lxc", vmid,
-- node, name, from}] ("from": the node that answered; other types are
-- ignored).  A guest listed more than once (every node of a cluster lists
-- every guest) counts once, the listing by its own node first.  Answers
-- that disagree on a guest's node (a migration seen half-way, or a node
-- that claims what is not its own) change nothing about it this round:
-- it is reported as a conflict, neither moved nor gone.  Guests on a node
-- no host entity names are left out and reported.  Returns {appeared,
-- moved, gone, returned, conflicts: [slugs], unknown_nodes: [names]}.
CREATE FUNCTION airlock.record_discovery(answered text[], guests jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	g record;
	host text;
	ent airlock.entities;
	slug text;
	seen bigint[] := '{}';
	out jsonb := jsonb_build_object('appeared', '[]'::jsonb, 'moved', '[]'::jsonb,
		'gone', '[]'::jsonb, 'returned', '[]'::jsonb, 'conflicts', '[]'::jsonb,
		'unknown_nodes', '[]'::jsonb);
BEGIN
	IF answered IS NULL OR guests IS NULL OR jsonb_typeof(guests) <> 'array' THEN
		RAISE EXCEPTION 'record_discovery: answered must be an array of node names and guests a JSON array'
			USING ERRCODE = 'AL002';
	END IF;
	IF EXISTS (SELECT 1 FROM jsonb_array_elements(guests) x
		   WHERE jsonb_typeof(x) <> 'object'
		      OR (x ->> 'type' IN ('qemu', 'lxc')
			  AND (jsonb_typeof(x -> 'vmid') IS DISTINCT FROM 'number'
			       OR (x ->> 'vmid') !~ '^[0-9]{3,9}$'
			       OR jsonb_typeof(x -> 'node') IS DISTINCT FROM 'string'
			       OR (x ->> 'vmid')::bigint NOT BETWEEN 100 AND 999999999))) THEN
		RAISE EXCEPTION 'record_discovery: every guest needs a vmid (100..999999999) and a node'
			USING ERRCODE = 'AL002';
	END IF;
	FOR g IN WITH l AS (
			SELECT CASE x ->> 'type' WHEN 'qemu' THEN 'vm' ELSE 'lxc' END AS typ,
			       (x ->> 'vmid')::integer AS vmid, x ->> 'node' AS node,
			       coalesce(x ->> 'name', '') AS name,
			       (x ->> 'from') IS NOT DISTINCT FROM (x ->> 'node') AS own
			FROM jsonb_array_elements(guests) x
			WHERE x ->> 'type' IN ('qemu', 'lxc')),
		      c AS (SELECT typ, vmid, count(DISTINCT node) AS nnodes FROM l GROUP BY typ, vmid)
		 SELECT DISTINCT ON (l.typ, l.vmid) l.typ, l.vmid, l.node, l.name, c.nnodes
		 FROM l JOIN c USING (typ, vmid)
		 ORDER BY l.typ, l.vmid, l.own DESC, l.node LOOP
		IF g.nnodes > 1 THEN
			SELECT * INTO ent FROM airlock.entities e
			WHERE e.type = g.typ AND e.vmid = g.vmid AND NOT e.id = ANY (seen)
			ORDER BY e.gone_at IS NULL DESC, e.id LIMIT 1;
			IF FOUND THEN
				seen := seen || ent.id;
				out := jsonb_set(out, '{conflicts}', (out -> 'conflicts') || to_jsonb(ent.slug));
			END IF;
			CONTINUE;
		END IF;
		SELECT h.slug INTO host FROM airlock.entities h
		WHERE h.type = 'proxmox-host' AND airlock._pve_node_of(h) = g.node
		ORDER BY h.slug LIMIT 1;
		IF host IS NULL THEN
			IF NOT out -> 'unknown_nodes' ? g.node THEN
				out := jsonb_set(out, '{unknown_nodes}', (out -> 'unknown_nodes') || to_jsonb(g.node));
			END IF;
			CONTINUE;
		END IF;
		SELECT * INTO ent FROM airlock.entities e
		WHERE e.type = g.typ AND e.vmid = g.vmid AND NOT e.id = ANY (seen)
		ORDER BY e.node = host DESC, e.gone_at IS NULL DESC, e.id LIMIT 1;
		IF NOT FOUND THEN
			slug := airlock._discovered_slug(g.typ, g.name, g.vmid);
			INSERT INTO airlock.entities (slug, type, node, vmid, discovered_at)
			VALUES (slug, g.typ, host, g.vmid, now()) RETURNING * INTO ent;
			INSERT INTO airlock.estate_changes (entity, change, detail)
			VALUES (slug, 'appeared', jsonb_build_object('node', host, 'vmid', g.vmid, 'name', g.name));
			out := jsonb_set(out, '{appeared}', (out -> 'appeared') || to_jsonb(slug));
		ELSE
			IF ent.node IS DISTINCT FROM host THEN
				INSERT INTO airlock.estate_changes (entity, change, detail)
				VALUES (ent.slug, 'moved', jsonb_build_object('from', ent.node, 'to', host));
				out := jsonb_set(out, '{moved}', (out -> 'moved') || to_jsonb(ent.slug));
			END IF;
			IF ent.gone_at IS NOT NULL THEN
				INSERT INTO airlock.estate_changes (entity, change, detail)
				VALUES (ent.slug, 'returned', jsonb_build_object('node', host, 'gone_at', ent.gone_at));
				out := jsonb_set(out, '{returned}', (out -> 'returned') || to_jsonb(ent.slug));
			END IF;
			UPDATE airlock.entities e SET node = host, gone_at = NULL, discovered_at = now(),
				updated_at = CASE WHEN e.node IS DISTINCT FROM host OR e.gone_at IS NOT NULL
						  THEN now() ELSE e.updated_at END
			WHERE e.id = ent.id;
		END IF;
		seen := seen || ent.id;
	END LOOP;
	FOR ent IN SELECT e.* FROM airlock.entities e JOIN airlock.entities h ON h.slug = e.node
		   WHERE e.type <> 'proxmox-host' AND e.gone_at IS NULL AND NOT e.id = ANY (seen)
		     AND airlock._pve_node_of(h) = ANY (answered)
		   ORDER BY e.slug FOR UPDATE OF e LOOP
		UPDATE airlock.entities e SET gone_at = now(), updated_at = now() WHERE e.id = ent.id;
		INSERT INTO airlock.estate_changes (entity, change, detail)
		VALUES (ent.slug, 'gone', jsonb_build_object('node', ent.node, 'vmid', ent.vmid));
		out := jsonb_set(out, '{gone}', (out -> 'gone') || to_jsonb(ent.slug));
	END LOOP;
	RETURN out;
END
$$;

-- A request on a guest discovery found gone is refused before its row is
-- written, whoever asks (run, guard, recover; SQL or MCP).
CREATE FUNCTION airlock._refuse_gone_target() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	ent airlock.entities;
BEGIN
	SELECT * INTO ent FROM airlock.entities e WHERE e.slug = NEW.target;
	IF FOUND AND ent.gone_at IS NOT NULL THEN
		RAISE EXCEPTION 'run on % refused: the guest is gone: no node airlock manages lists it (vmid % was last on %, missing since %). It was removed, or moved to a node the inventory does not list. Use a target that exists, or add the guest (or its node) back and wait for discovery.',
			ent.slug, ent.vmid, ent.node,
			to_char(ent.gone_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
			USING ERRCODE = 'AL016';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER executions_refuse_gone BEFORE INSERT ON airlock.executions
	FOR EACH ROW EXECUTE FUNCTION airlock._refuse_gone_target();

-- The inventory seed, now aware of discovery: a host may name its cluster
-- node (pve_node); a guest's node is taken from the inventory only until
-- discovery has listed the guest (then the scheduler owns it), and may be
-- left out for a guest discovery already knows.  A new slug for a guest
-- discovery recorded under another slug is refused, naming that slug.
CREATE OR REPLACE FUNCTION airlock.seed_inventory(inventory jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = airlock, pg_temp AS $$
DECLARE
	n integer := 0;
	m integer;
	e jsonb;
	r jsonb;
	cur airlock.entities;
	other text;
	node_in text;
BEGIN
	FOR e IN SELECT x FROM jsonb_array_elements(coalesce(inventory -> 'entities', '[]')) x
		 ORDER BY (x ->> 'type') <> 'proxmox-host' LOOP
		SELECT * INTO cur FROM airlock.entities t WHERE t.slug = e ->> 'slug';
		IF NOT FOUND AND e ->> 'type' IN ('vm', 'lxc') THEN
			SELECT t.slug INTO other FROM airlock.entities t
			WHERE t.type = e ->> 'type' AND t.vmid = (e ->> 'vmid')::integer
			  AND t.discovered_at IS NOT NULL AND t.slug <> e ->> 'slug'
			ORDER BY t.id LIMIT 1;
			IF other IS NOT NULL THEN
				RAISE EXCEPTION 'inventory: % has vmid %, which discovery already recorded as %; name it % in the inventory. Nothing was written.',
					e ->> 'slug', e ->> 'vmid', other, other USING ERRCODE = 'AL002';
			END IF;
		END IF;
		node_in := e ->> 'node';
		IF cur.discovered_at IS NOT NULL OR node_in IS NULL THEN
			node_in := coalesce(cur.node, node_in);
		END IF;
		IF node_in IS NULL AND e ->> 'type' IN ('vm', 'lxc') THEN
			RAISE EXCEPTION 'inventory: % has no node, and discovery has not listed it yet; give its node. Nothing was written.',
				e ->> 'slug' USING ERRCODE = 'AL002';
		END IF;
		INSERT INTO airlock.entities AS t (slug, type, node, vmid, address, port, ssh_user,
			host_key_fingerprint, zerto_vm_identifier, attributes, pve_node)
		VALUES (e ->> 'slug', e ->> 'type', node_in, (e ->> 'vmid')::integer, e ->> 'address',
			(e ->> 'port')::integer, e ->> 'ssh_user', e ->> 'host_key_fingerprint',
			e ->> 'zerto_vm_identifier', coalesce(e -> 'attributes', '{}'), e ->> 'pve_node')
		ON CONFLICT (slug) DO UPDATE SET type = EXCLUDED.type, node = EXCLUDED.node,
			vmid = EXCLUDED.vmid, address = EXCLUDED.address, port = EXCLUDED.port,
			ssh_user = EXCLUDED.ssh_user, host_key_fingerprint = EXCLUDED.host_key_fingerprint,
			zerto_vm_identifier = EXCLUDED.zerto_vm_identifier, pve_node = EXCLUDED.pve_node,
			attributes = t.attributes || EXCLUDED.attributes, updated_at = now()
		WHERE (t.type, t.node, t.vmid, t.address, t.port, t.ssh_user, t.host_key_fingerprint,
		       t.zerto_vm_identifier, t.pve_node) IS DISTINCT FROM
		      (EXCLUDED.type, EXCLUDED.node, EXCLUDED.vmid, EXCLUDED.address, EXCLUDED.port,
		       EXCLUDED.ssh_user, EXCLUDED.host_key_fingerprint, EXCLUDED.zerto_vm_identifier,
		       EXCLUDED.pve_node)
		   OR NOT (t.attributes @> EXCLUDED.attributes);
		GET DIAGNOSTICS m = ROW_COUNT;
		n := n + m;
	END LOOP;
	FOR r IN SELECT x FROM jsonb_array_elements(coalesce(inventory -> 'relationships', '[]')) x LOOP
		INSERT INTO airlock.relationships (source, target, type, created_by)
		VALUES (r ->> 'source', r ->> 'target', r ->> 'type', session_user)
		ON CONFLICT DO NOTHING;
		GET DIAGNOSTICS m = ROW_COUNT;
		n := n + m;
	END LOOP;
	RETURN n;
END
$$;

SELECT airlock._secure_new_objects();

GRANT EXECUTE ON FUNCTION airlock.record_discovery(text[], jsonb) TO airlock_scheduler;
GRANT SELECT ON airlock.estate_changes TO airlock_operator, airlock_worker, airlock_scheduler;
GRANT SELECT (discovered_at, gone_at) ON airlock.entities TO airlock_agent;
