// sdk-client.mjs -- the official MCP TypeScript SDK (@modelcontextprotocol/sdk) drives
// airlock-mcp over stdio: initialize, list tools, call every tool, read structured
// results (the SDK validates structuredContent against each tool's outputSchema).
//
//   node tests/mcp/sdk-client.mjs SERVER_BINARY
//
// The database comes from PGHOST/PGPORT/PGDATABASE and the agent login from
// AIRLOCK_MCP_TEST_USER: the SDK's stdio transport hands the child only HOME,
// LOGNAME, PATH, SHELL, TERM and USER, so the settings are passed explicitly.
// Expects the database the suite prepared (seeded; tools.txt and wait.txt ran).
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const server = process.argv[2];
const conninfo = `host=${process.env.PGHOST} port=${process.env.PGPORT} dbname=${process.env.PGDATABASE} ` +
	`user=${process.env.AIRLOCK_MCP_TEST_USER}`;
let failed = 0;
let passed = 0;

async function check(name, fn) {
	try {
		await fn();
		passed++;
		console.log(`ok - ${name}`);
	} catch (e) {
		failed++;
		console.log(`not ok - ${name}\n#   ${String(e && e.stack || e).split('\n').slice(0, 6).join('\n#   ')}`);
	}
}

async function connect(env, name = 'sdk-test') {
	const transport = new StdioClientTransport({ command: server, args: [], env, stderr: 'pipe' });
	const client = new Client({ name, version: '1.0.0' });
	await client.connect(transport);
	return { client, transport };
}

const text = (r) => r.content.map((c) => c.text).join('\n');

// The database settings travel in AIRLOCK_DB, the one variable the server reads for them.
const { client } = await connect({ ...getDefaultEnvironment(), AIRLOCK_DB: conninfo });

await check('initialize negotiates the latest version and names the server', async () => {
	const info = client.getServerVersion();
	assert.equal(info.name, 'airlock-mcp');
	assert.deepEqual(client.getServerCapabilities().tools, { listChanged: false });
	assert.match(client.getInstructions(), /Never fall back to raw SSH/);
});

await check('ping', async () => {
	assert.deepEqual(await client.ping(), {});
});

let tools;
await check('tools/list: eleven tools, each with input and output schemas and annotations', async () => {
	tools = (await client.listTools()).tools;
	assert.deepEqual(tools.map((t) => t.name), ['run', 'get_execution', 'list_executions',
		'cancel_execution', 'update_entity_attributes', 'create_relationship', 'get_relations',
		'get_health_summary', 'list_checks', 'check_tool', 'recover_file']);
	for (const t of tools) {
		assert.equal(t.inputSchema.type, 'object', t.name);
		assert.equal(t.inputSchema.additionalProperties, false, t.name);
		assert.equal(t.outputSchema.type, 'object', t.name);
		assert.equal(typeof t.annotations.readOnlyHint, 'boolean', t.name);
		assert.match(t.name, /^[A-Za-z0-9_.-]{1,128}$/);
	}
	const ro = tools.filter((t) => t.annotations.readOnlyHint).map((t) => t.name);
	assert.deepEqual(ro, ['get_execution', 'list_executions', 'get_relations', 'get_health_summary',
		'list_checks', 'check_tool']);
	const run = tools.find((t) => t.name === 'run');
	assert.equal(run.annotations.destructiveHint, true);
	assert.equal(run.annotations.idempotentHint, false);
});

await check('run: a pre-flight refusal is an isError result with the exact message', async () => {
	const r = await client.callTool({ name: 'run', arguments: { target: 'vm:zimaos',
		command: 'apt-get install nfs-kernel-server', action: 'install the NFS server' } });
	assert.equal(r.isError, true);
	assert.equal(r.content[0].text, 'run on vm:zimaos blocked: QEMU guest agent is not running ' +
		'(qm guest exec unavailable). Start the agent first or use a different target.');
	assert.match(r.content[1].text, /go around airlock/);
});

let id;
await check('run: accepted, structured, with what to do now', async () => {
	const r = await client.callTool({ name: 'run', arguments: { target: 'vm:web01',
		command: 'cat /etc/os-release', action: 'read the OS version', change_id: 'sdk-1',
		wait_seconds: 1 } });
	assert.equal(r.isError, undefined);
	const s = r.structuredContent;
	id = s.execution.id;
	assert.equal(typeof id, 'number');
	assert.equal(s.execution.state, 'received');
	assert.equal(s.execution.requested_by, process.env.AIRLOCK_MCP_TEST_USER);
	assert.equal(s.final, false);
	assert.deepEqual(s.wait, { seconds: 1, settled: false, ended: 'timeout' });
	assert.match(s.next_step, /go around airlock/);
	assert.deepEqual(JSON.parse(r.content[1].text), s);
});

await check('a wait reports progress to a client that asks for it', async () => {
	const seen = [];
	const r = await client.callTool({ name: 'get_execution', arguments: { id, wait_seconds: 1 } },
		undefined, { onprogress: (p) => seen.push(p) });
	assert.equal(r.structuredContent.wait.ended, 'timeout');
	assert.equal(seen.length, 1);
	assert.equal(seen[0].progress, 1);
	assert.match(seen[0].message, new RegExp(`^execution ${id}: received; waiting up to 1 s more$`));
});

await check('get_execution', async () => {
	const r = await client.callTool({ name: 'get_execution', arguments: { id } });
	assert.equal(r.structuredContent.execution.id, id);
	assert.equal(r.structuredContent.execution.change_id, 'sdk-1');
});

await check('a waiting call does not hold up the next one: the quick answer comes first', async () => {
	const order = [];
	const waiting = client.callTool({ name: 'get_execution', arguments: { id, wait_seconds: 4 } })
		.then((r) => { order.push('wait'); return r; });
	const quick = client.callTool({ name: 'list_executions', arguments: { limit: 1 } })
		.then((r) => { order.push('list'); return r; });
	const [w, q] = await Promise.all([waiting, quick]);
	assert.deepEqual(order, ['list', 'wait']);
	assert.equal(w.structuredContent.wait.ended, 'timeout');
	assert.equal(q.structuredContent.executions[0].id, id);
});

await check('list_executions pages with nextCursor', async () => {
	const a = await client.callTool({ name: 'list_executions', arguments: { limit: 1 } });
	assert.equal(a.structuredContent.executions.length, 1);
	assert.equal(a.structuredContent.executions[0].id, id);
	assert.equal(typeof a.structuredContent.nextCursor, 'string');
	const b = await client.callTool({ name: 'list_executions',
		arguments: { limit: 1, cursor: a.structuredContent.nextCursor } });
	assert.ok(b.structuredContent.executions[0].id < id);
});

await check('cancel_execution', async () => {
	const r = await client.callTool({ name: 'cancel_execution', arguments: { id } });
	assert.equal(r.structuredContent.execution.state, 'cancelled');
	assert.equal(r.structuredContent.final, true);
	const again = await client.callTool({ name: 'cancel_execution', arguments: { id } });
	assert.equal(again.isError, true);
});

await check('update_entity_attributes drops health with the reason', async () => {
	const r = await client.callTool({ name: 'update_entity_attributes',
		arguments: { slug: 'vm:db01', attributes: { role: 'database', health: 'great' } } });
	assert.deepEqual(r.structuredContent.merged, ['role']);
	assert.equal(r.structuredContent.dropped[0].key, 'health');
	assert.match(text(r), /Warning: dropped health/);
});

await check('create_relationship and get_relations', async () => {
	const c = await client.callTool({ name: 'create_relationship',
		arguments: { source: 'vm:db01', target: 'proxmox-host:hubris', type: 'runs-on' } });
	assert.equal(c.structuredContent.created, true);
	const r = await client.callTool({ name: 'get_relations', arguments: { slug: 'vm:db01' } });
	assert.ok(r.structuredContent.relations.some((x) => x.type === 'runs-on' &&
		x.target === 'proxmox-host:hubris' && x.direction === 'out' &&
		x.created_by === process.env.AIRLOCK_MCP_TEST_USER));
});

await check('get_health_summary and list_checks', async () => {
	const h = await client.callTool({ name: 'get_health_summary', arguments: {} });
	assert.ok(h.structuredContent.entities.some((e) => e.slug === 'vm:zimaos' &&
		e.qemu_guest_agent === 'not_running'));
	const c = await client.callTool({ name: 'list_checks', arguments: { slug: 'vm:zimaos' } });
	assert.deepEqual(c.structuredContent.checks, []);
});

await check('check_tool: read_only, mutating, exec, unknown', async () => {
	const v = async (server, tool) => (await client.callTool({ name: 'check_tool',
		arguments: { server, tool, vm: 'vm:web01' } })).structuredContent.verdict;
	assert.equal(await v('proxmox', 'get_vm_status'), 'read_only');
	assert.equal(await v('proxmox', 'stop_vm'), 'mutating');
	assert.equal(await v('ssh', 'exec'), 'exec');
	assert.equal(await v('winrm', 'run_ps'), 'unknown');
});

await check('invalid arguments are an isError result', async () => {
	const r = await client.callTool({ name: 'get_execution', arguments: { id: 'seven' } });
	assert.equal(r.isError, true);
	assert.match(text(r), /"id" must be an integer/);
});

await check('an unknown tool is JSON-RPC error -32602', async () => {
	await assert.rejects(client.callTool({ name: 'rm_rf', arguments: {} }),
		(e) => e instanceof McpError && e.code === -32602);
});

await check('an unknown method is JSON-RPC error -32601', async () => {
	await assert.rejects(client.listResources(), (e) => e instanceof McpError && e.code === -32601);
});

await client.close();

await check('without database settings the server still speaks MCP and says why tools fail', async () => {
	const { client: bare } = await connect(getDefaultEnvironment(), 'sdk-no-db');
	const r = await bare.callTool({ name: 'get_health_summary', arguments: {} });
	assert.equal(r.isError, true);
	assert.match(r.content[1].text, /database could not be reached/);
	await bare.close();
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
