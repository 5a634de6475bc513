// graphile.js -- graphile-worker measured the way tests/daemon/bench.sh
// measures airlockd: wake-up of an idle queue, then a drain of a backlog.
//
//   node graphile.js            (PG* from the environment)
//   WAKE_N=100 N=2000 CONCURRENCY=8 TASK_MS=100 node graphile.js
//
// Wake-up: with the worker parked, the time from just before the enqueue
// call (graphile_worker.add_job, one SQL call, as airlock's run() is) to the
// task handler starting.  Drain: N jobs enqueued in one statement, then a
// worker started; jobs per second from its start until the last handler
// finished (the handler does nothing).  TASK_MS=t adds a second drain whose
// tasks each wait t ms (see drain()).  Prints one `peer ...` line each.
// With AIRLOCK_PGTMP set (scripts/pgtmp), the drain line also gives the CPU
// the cluster spent per job, enqueue included, counted as tests/daemon/lib.sh
// counts it for airlockd: the postmaster with its reaped children, and its
// live children, from /proc.
import { run, makeWorkerUtils } from "graphile-worker";
import fs from "node:fs";
import pg from "pg";

const WAKE_N = Number(process.env.WAKE_N || 100);
const N = Number(process.env.N || 2000);
const CONCURRENCY = Number(process.env.CONCURRENCY || 8);
const conn = `postgres://${process.env.PGUSER}@/${process.env.PGDATABASE}?host=${encodeURIComponent(process.env.PGHOST)}&port=${process.env.PGPORT}`;
const quiet = new (await import("graphile-worker")).Logger(() => () => {});

// CPU ticks of the cluster (see above), or null without AIRLOCK_PGTMP.
function pgTicks() {
	if (!process.env.AIRLOCK_PGTMP) return null;
	const fields = (pid) => {
		try {
			const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
			return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		} catch {
			return null; // ended between the listing and the read
		}
	};
	const master = fs.readFileSync(`${process.env.AIRLOCK_PGTMP}/data/postmaster.pid`, "utf8").split("\n")[0];
	// After ")": field 3 is the state, so stat field k is at index k - 3.
	const m = fields(master);
	let ticks = Number(m[11]) + Number(m[12]) + Number(m[13]) + Number(m[14]);
	for (const pid of fs.readdirSync("/proc").filter((d) => /^[0-9]+$/.test(d))) {
		const f = fields(pid);
		if (f && f[1] === master) ticks += Number(f[11]) + Number(f[12]);
	}
	return ticks;
}
const HZ = 100; // USER_HZ: the unit of /proc/<pid>/stat times on Linux

const pct = (xs, q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (t) => Number(t) / 1e6;

const utils = await makeWorkerUtils({ connectionString: conn, logger: quiet });
await utils.migrate();
await utils.release();
const client = new pg.Client({ connectionString: conn });
await client.connect();

// ---- wake-up
let waiter = null;
const runner = await run({
	connectionString: conn,
	concurrency: CONCURRENCY,
	noHandleSignals: true,
	logger: quiet,
	taskList: {
		wake: async () => {
			const t = process.hrtime.bigint();
			if (waiter) waiter(t);
		},
		noop: async () => {},
	},
});
await new Promise((r) => setTimeout(r, 500));
const lat = [];
for (let i = 0; i < WAKE_N; i++) {
	const started = new Promise((r) => (waiter = r));
	const t0 = process.hrtime.bigint();
	await client.query("SELECT graphile_worker.add_job('wake', json_build_object('i', $1::int))", [i]);
	const t1 = await started;
	lat.push(ms(t1 - t0));
	await new Promise((r) => setTimeout(r, 20));
}
await runner.stop();
lat.sort((a, b) => a - b);
console.log(
	`peer graphile-worker wake-up: n=${lat.length} p50=${pct(lat, 0.5).toFixed(2)} ms p90=${pct(lat, 0.9).toFixed(2)} ms p99=${pct(lat, 0.99).toFixed(2)} ms`,
);

// ---- drain: N jobs enqueued in one statement, then a worker started.  With
// taskMs > 0 each task waits that long (a timer, no CPU) before it ends, so
// that the jobs flow at the rate airlockd's commands do on the rig; the CPU
// per job is then compared at the same pace.
async function drain(label, taskMs) {
	const c0 = pgTicks();
	const u0 = process.cpuUsage();
	await client.query("SELECT graphile_worker.add_job('noop', json_build_object('i', g)) FROM generate_series(1, $1::int) g", [N]);
	let done = 0;
	let finished;
	const all = new Promise((r) => (finished = r));
	const t0 = process.hrtime.bigint();
	const drainer = await run({
		connectionString: conn,
		concurrency: CONCURRENCY,
		noHandleSignals: true,
		logger: quiet,
		taskList: {
			noop: async () => {
				if (taskMs > 0) await new Promise((r) => setTimeout(r, taskMs));
				if (++done === N) finished(process.hrtime.bigint());
			},
		},
	});
	let timer;
	const t1 = await Promise.race([all, new Promise((r) => (timer = setTimeout(() => r(null), 600000)))]);
	clearTimeout(timer);
	await drainer.stop();
	if (t1 === null) {
		console.log(`peer graphile-worker ${label}: only ${done} of ${N} jobs in 600 s`);
		process.exit(1);
	}
	const c1 = pgTicks();
	const u = process.cpuUsage(u0);
	const secs = ms(t1 - t0) / 1000;
	const cpu =
		c0 === null
			? ""
			: `; CPU per job: PostgreSQL ${(((c1 - c0) * 1000) / HZ / N).toFixed(3)} ms, the worker process ${((u.user + u.system) / 1000 / N).toFixed(3)} ms`;
	const pace = taskMs > 0 ? `, each task waiting ${taskMs} ms` : "";
	console.log(`peer graphile-worker ${label}: ${N} jobs in ${secs.toFixed(2)} s = ${(N / secs).toFixed(0)}/s (concurrency=${CONCURRENCY}${pace})${cpu}`);
}

await drain("drain", 0);
if (Number(process.env.TASK_MS || 0) > 0) await drain("paced drain", Number(process.env.TASK_MS));
await client.end();
process.exit(0);
