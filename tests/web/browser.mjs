// browser.mjs -- the console in Debian's headless Chromium, driven by
// playwright-core (a test-only devDependency from the lockfile).  Runs inside
// tests/web/run.sh: airlock-web at WEB_URL (and one with a 2 s idle expiry at
// WEB_SHORT_URL), airlockd on the rig, the PG* environment of the test
// database.  Exits non-zero at the first failed expectation, naming it.
import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const URL = process.env.WEB_URL;
const SHORT = process.env.WEB_SHORT_URL;
const LOG = process.env.WEB_LOG;
const WAIT = 30000; // a bound, not a timing assertion

function log(msg) {
  if (LOG) appendFileSync(LOG, msg + '\n');
}
function expect(cond, what) {
  if (!cond) throw new Error('expected: ' + what);
  log('ok ' + what);
}
function sql(q, user) {
  const env = { ...process.env };
  if (user) env.PGUSER = user;
  return execFileSync('psql', ['-XAtq', '-c', q], { env, encoding: 'utf8' }).trim();
}
// A request as the agent (or another login); its id.
function run(target, command, user = 'hermes') {
  const q = `SELECT airlock.run(${lit(target)}, ${lit(command)})`;
  return sql(q, user);
}
function lit(s) {
  return "'" + s.replace(/'/g, "''") + "'";
}
function untilState(id, states) {
  const deadline = Date.now() + WAIT;
  for (;;) {
    const st = sql(`SELECT state FROM airlock.executions WHERE id = ${id}`);
    if (states.includes(st)) return st;
    if (Date.now() > deadline) throw new Error(`execution ${id} stayed ${st}`);
    execFileSync('sleep', ['0.2']);
  }
}

async function signIn(browser, login, password, base = URL) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    d.dismiss();
  });
  page.dialogs = dialogs;
  await page.goto(base + '/');
  expect(page.url().endsWith('/login'), `${login}: an anonymous visit lands on the sign-in form`);
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', password);
  await Promise.all([page.waitForNavigation(), page.click('form.signin button')]);
  if (!(await page.$('#who'))) log('sign-in page: ' + page.url() + ' ' + (await page.content()).slice(0, 3000));
  expect((await page.textContent('#who', { timeout: WAIT })) === login, `${login} is signed in and named in the header`);
  return page;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  chromiumSandbox: false,
  args: ['--disable-dev-shm-usage', '--disable-gpu'],
});
let failed = false;
try {
  const alice = await signIn(browser, 'alice', 'alice-secret-pw');
  await alice.waitForSelector('#live[data-state=live]', { timeout: WAIT });
  expect(true, 'the pending page connects its live stream');

  // A request arrives while the page is open: it appears without a reload.
  const navs = [];
  alice.on('framenavigated', (f) => navs.push(f.url()));
  const id1 = run('proxmox-host:hubris', 'apt-get install -y nfs-common');
  untilState(id1, ['pending_approval']);
  await alice.waitForSelector(`li.req[data-id="${id1}"]`, { timeout: WAIT });
  expect(navs.length === 0, 'the new request appeared live, with no reload');
  const item = await alice.textContent(`li.req[data-id="${id1}"]`);
  expect(/config_mutation/.test(item) && /by hermes/.test(item) && /votes 0\/1/.test(item),
    'the list shows class, requester, age, expiry and votes');

  // The request page: command, reasons, blast radius, rewind status.
  await Promise.all([alice.waitForNavigation(), alice.click(`li.req[data-id="${id1}"] a`)]);
  expect((await alice.textContent('#command')) === 'apt-get install -y nfs-common', 'the exact command');
  expect(/rule /.test(await alice.textContent('ul.reasons')), 'the reasons with their rule ids');
  expect(/rewind/.test(await alice.textContent('#rewind')), 'the rewind status');
  expect(/vm:db01/.test(await alice.textContent('#blast')), 'the blast radius');
  expect(/no preview|read-only preview/.test(await alice.textContent('#preview')), 'the preview section');

  // Approve it, and watch it run on the same page.
  await alice.fill('#approve-form input[name=note]', 'browser approval');
  await Promise.all([alice.waitForNavigation(), alice.click('#approve-form button')]);
  expect(/approve: approved/.test(await alice.textContent('#notice')), 'approved from the page');
  await alice.waitForSelector('#live[data-state=live]', { timeout: WAIT });
  await alice.waitForFunction(() => /succeeded|failed/.test(document.querySelector('#state').textContent),
    null, { timeout: WAIT });
  expect(true, 'the page shows it ran, live');
  expect(sql(`SELECT approver FROM airlock.approvals WHERE execution_id = ${id1}`) === 'alice',
    'the approval is alice\'s own login');

  // A host command naming a guest: the guest and its protection.
  const id2 = run('proxmox-host:hubris', 'qm destroy 102');
  untilState(id2, ['pending_approval']);
  await alice.goto(`${URL}/r/${id2}`);
  const named = await alice.textContent('#blast tr.named');
  expect(/vm:db01/.test(named) && /qm destroy/.test(named) && /VM known to Zerto as db01/.test(named),
    'qm destroy 102 shows vm:db01 with its own protection');

  // Destructive: one approval is not enough, a second operator completes it.
  const id3 = run('proxmox-host:hubris', 'reboot');
  untilState(id3, ['pending_approval']);
  await alice.goto(`${URL}/r/${id3}`);
  await Promise.all([alice.waitForNavigation(), alice.click('#approve-form button')]);
  expect(/pending_approval/.test(await alice.textContent('#notice')) &&
    (await alice.textContent('#votes')) === '1/2', 'one approval of a reboot is one vote of two');
  const bob = await signIn(browser, 'bob', 'bob-secret-pw');
  await bob.goto(`${URL}/r/${id3}`);
  await Promise.all([bob.waitForNavigation(), bob.click('#approve-form button')]);
  expect(/approve: approved/.test(await bob.textContent('#notice')), 'bob\'s approval completes the quorum');
  await bob.waitForFunction(() => /succeeded/.test(document.querySelector('#state').textContent),
    null, { timeout: WAIT });
  expect(true, 'and the reboot runs');

  // Self-approval is refused on the page.
  const id4 = run('proxmox-host:hubris', 'systemctl restart pvedaemon; echo browser-self', 'alice');
  untilState(id4, ['pending_approval']);
  await alice.goto(`${URL}/r/${id4}`);
  expect(await alice.isVisible('#own'), 'alice is told it is her own request');
  await Promise.all([alice.waitForNavigation(), alice.click('#approve-form button')]);
  expect(/nobody may approve their own request/.test(await alice.textContent('#notice')),
    'self-approval is refused, in the database\'s words');
  expect(untilState(id4, ['pending_approval']) === 'pending_approval', 'and nothing was approved');

  // A write without the CSRF token is refused.
  const status = await alice.evaluate(async (id) => {
    const r = await fetch(`/r/${id}/approve`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'note=forged',
    });
    return r.status;
  }, id2);
  expect(status === 403, 'a POST without the CSRF token is refused (403)');
  expect(untilState(id2, ['pending_approval']) === 'pending_approval', 'and changed nothing');

  // Escape sequences, bidi controls and markup are shown, never obeyed.
  const nasty = 'echo ok\u001b[2K\r\u001b]0;pwned\u0007 \u202egpj.exe <img src=x onerror=alert(1)>' +
    '<script>alert(2)</script>; systemctl restart pveproxy';
  const id5 = run('proxmox-host:hubris', nasty);
  untilState(id5, ['pending_approval']);
  await alice.goto(`${URL}/r/${id5}`);
  const shown = await alice.textContent('#command');
  expect(shown.includes('\\x1b[2K\\r\\x1b]0;pwned\\x07 \\u202egpj.exe'), 'controls and bidi are shown as escapes');
  expect(!/[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/.test(shown),
    'no control or bidi character is rendered');
  expect(shown.includes('<img src=x onerror=alert(1)><script>alert(2)</script>'), 'markup is shown as text');
  expect(await alice.$$eval('#command *:not(span.hidden-chars)', (els) => els.length) === 0,
    'the command creates no element');
  expect(await alice.isVisible('#hidden-warning'), 'the reader is warned about hidden characters');
  await alice.goto(`${URL}/`);
  await alice.waitForSelector(`li.req[data-id="${id5}"]`, { timeout: WAIT });
  expect(alice.dialogs.length === 0, 'no script from a command ever ran');

  // A session past its expiry is refused.
  const short = await signIn(browser, 'alice', 'alice-secret-pw', SHORT);
  await short.goto(`${SHORT}/r/${id2}`);
  await short.waitForTimeout(3000); // past the 2 s idle expiry
  await Promise.all([short.waitForNavigation(), short.click('#approve-form button')]);
  expect(/Session ended/.test(await short.textContent('h1')), 'an approval after expiry is refused');
  expect(untilState(id2, ['pending_approval']) === 'pending_approval', 'and nothing was approved');
} catch (e) {
  failed = true;
  console.error(e.message);
  log('FAILED ' + e.message);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
