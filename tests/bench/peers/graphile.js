// graphile.js -- graphile-worker measured the way tests/daemon/bench.sh
// measures airlockd: wake-up of an idle queue, then a drain of a backlog.
//
//   node graphile.js            (PG* from the environment)
//   WAKE_N=100 N=2000 CONCURRENCY=8 node graphile.js
//
// Wake-up: with the worker parked, the time from just before the enqueue
// call (graphile_worker.add_job, one SQL call, as airlock's run() is) to the
// task handler starting.  Drain: N jobs enqueued in one statement, then a
// worker started; jobs per second from its start until the last handler
// finished (the handler does nothing).  Prints one `peer ...` line each.
import { run, makeWorkerUtils } from "graphile-worker";
import pg from "pg";

const WAKE_N = Number(process.env.WAKE_N || 100);
const N = Number(process.env.N || 2000);
const CONCURRENCY = Number(process.env.CONCURRENCY || 8);
const conn = `postgres://${process.env.PGUSER}@/${process.env.PGDATABASE}?host=${encodeURIComponent(process.env.PGHOST)}&port=${process.env.PGPORT}`;
const quiet = new (await import("graphile-worker")).Logger(() => () => {});

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

// ---- drain
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
			if (++done === N) finished(process.hrtime.bigint());
		},
	},
});
let timer;
const t1 = await Promise.race([all, new Promise((r) => (timer = setTimeout(() => r(null), 300000)))]);
clearTimeout(timer);
await drainer.stop();
await client.end();
if (t1 === null) {
	console.log(`peer graphile-worker drain: only ${done} of ${N} jobs in 300 s`);
	process.exit(1);
}
const secs = ms(t1 - t0) / 1000;
console.log(`peer graphile-worker drain: ${N} jobs in ${secs.toFixed(2)} s = ${(N / secs).toFixed(0)}/s (concurrency=${CONCURRENCY})`);
process.exit(0);
