// browser.mjs -- the console in Debian's headless Chromium, driven by
// playwright-core (a test-only devDependency from the lockfile).  Runs inside
// tests/web/run.sh: airlock-web at WEB_URL (and one with a 2 s idle expiry at
// WEB_SHORT_URL), airlockd on the rig delivering notifications to receivers
// that log them in WEB_HOOKS, the PG* environment of the test database.
// Every link a notification carries is followed signed out, through a real
// sign-in; the request's first screen is measured at desktop and phone
// sizes; action links decide once and refuse the rest; the queue is
// filtered and decided in bulk.  A screenshot of each page at both sizes
// goes to WEB_SHOTS for a person to look at.  Exits non-zero at the first
// failed expectation, naming it.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const URL = process.env.WEB_URL;
const SHORT = process.env.WEB_SHORT_URL;
const LOG = process.env.WEB_LOG;
const HOOKS = process.env.WEB_HOOKS;
const SHOTS = process.env.WEB_SHOTS || 'build/screenshots';
const WAIT = 30000; // a bound, not a timing assertion
const SIZES = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
};
const PASSWORDS = { alice: 'alice-secret-pw', bob: 'bob-secret-pw' };

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
function run(target, command, user = 'hermes', action = null) {
  const q = `SELECT airlock.run(${lit(target)}, ${lit(command)}, NULL, NULL, ${action ? lit(action) : 'NULL'})`;
  return sql(q, user);
}
// The messages the receivers got for request id at path (parsed bodies).
function messages(id, path) {
  const out = [];
  for (const line of readFileSync(HOOKS, 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (!r.path.startsWith(path) || r.headers['x-airlock-event'] !== 'pending_approval') continue;
    if (!r.body.includes(`/r/${id}`)) continue;
    out.push(JSON.parse(r.body));
  }
  return out;
}
function untilMessage(id, path) {
  const deadline = Date.now() + WAIT;
  for (;;) {
    const m = messages(id, path);
    if (m.length) return m[0];
    if (Date.now() > deadline) throw new Error(`no notification of ${id} at ${path}`);
    execFileSync('sleep', ['0.2']);
  }
}
// Every link one request's notifications carry, with who may follow it.
function linksOf(id) {
  const json = untilMessage(id, '/json');
  const alice = untilMessage(id, '/alice');
  const slack = untilMessage(id, '/slack');
  const mm = untilMessage(id, '/mm');
  const mmOpen = /\[Open request \d+\]\(([^)]+)\)/.exec(mm.text)[1];
  return [
    ['json: the request', json.url, 'bob'],
    ['json: approve', json.approve_url, 'bob'],
    ['json: reject', json.reject_url, 'bob'],
    ['alice: the request', alice.url, 'alice'],
    ['alice: approve (hers)', alice.approve_url, 'alice'],
    ['alice: reject (hers)', alice.reject_url, 'alice'],
    ['slack: Open request', slack.blocks[1].elements[0].url, 'bob'],
    ['mattermost: Open request', mmOpen, 'bob'],
  ];
}
async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: false });
  log(`screenshot ${SHOTS}/${name}.png`);
}
// A fresh browser of size `size`, signed out.
async function fresh(browser, size) {
  const ctx = await browser.newContext(SIZES[size]);
  return ctx.newPage();
}
// On the sign-in form a signed-out page was sent to: sign in as login.
async function signInHere(page, login) {
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', PASSWORDS[login]);
  await Promise.all([page.waitForNavigation(), page.click('form.signin button')]);
}
// Every element on the first screen: inside the viewport without scrolling.
async function onFirstScreen(page, size, sels) {
  const h = SIZES[size].viewport.height;
  for (const sel of sels) {
    const box = await page.locator(sel).first().boundingBox();
    expect(box !== null && box.y >= 0 && box.y + box.height <= h,
      `${size}: ${sel} is on the first screen (${box ? Math.round(box.y + box.height) : 'absent'} of ${h} px)`);
  }
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
  expect(/vm:db01/.test(named) && /qm destroy/.test(named) && /not checked against Zerto yet/.test(named) &&
    !/known to Zerto/.test(named), 'qm destroy 102 shows vm:db01 with its own protection, and claims none');

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
  expect(await alice.$$eval('#command *:not(mark.hidden-char)', (els) => els.length) === 0,
    'the command creates no element but the marks of its hidden characters');
  expect(await alice.$$eval('#command mark.hidden-char', (els) => els.length) === 5 &&
    (await alice.getAttribute('#hidden-count', 'data-hidden')) === '5',
    'each hidden character is marked on its own, and counted');
  expect(await alice.isVisible('#hidden-warning'), 'the reader is warned about hidden characters');
  await alice.goto(`${URL}/`);
  await alice.waitForSelector(`li.req[data-id="${id5}"]`, { timeout: WAIT });
  expect(alice.dialogs.length === 0, 'no script from a command ever ran');

  // ---- Every link a notification carries, followed signed out, through a real sign-in.
  for (const size of Object.keys(SIZES)) {
    const command = `apt-get install -y pkg-browser-${size}`;
    const id = run('proxmox-host:hubris', command, 'hermes', `install the ${size} package`);
    untilState(id, ['pending_approval']);
    for (const [what, link, login] of linksOf(id)) {
      const page = await fresh(browser, size);
      await page.goto(link);
      expect(page.url().startsWith(`${URL}/login?next=`), `${size}: ${what}: signed out, the link asks for a sign-in`);
      await signInHere(page, login);
      expect(page.url() === link, `${size}: ${what}: the sign-in lands on the link (${page.url()})`);
      expect((await page.textContent('#command')) === command, `${size}: ${what}: the request opens`);
      if (what === 'json: the request') {
        await onFirstScreen(page, size, ['#command', '#target', '#purpose', '#class-words', '#votes',
          '#rewind', '#preview-headline', '#approve-button', '#reject-button']);
        expect((await page.textContent('#purpose')) === `install the ${size} package`, `${size}: the purpose`);
        expect((await page.textContent('#target')) === 'proxmox-host:hubris', `${size}: the target`);
        expect(/packages/.test(await page.textContent('#class-words')), `${size}: the class in the rule's words`);
        expect(/rewind/.test(await page.textContent('#rewind')), `${size}: the rewind status`);
        await shot(page, `request-${size}`);
      }
      if (what === 'json: approve') {
        await onFirstScreen(page, size, ['#action-title', '#command', '#purpose', '#action-confirm']);
        await shot(page, `action-${size}`);
      }
      await page.context().close();
    }
    expect(sql(`SELECT state FROM airlock.executions WHERE id = ${id}`) === 'pending_approval',
      `${size}: opening every link decided nothing`);
  }

  // A hard-to-read command: its marks, and the box to tick, on the phone's first screen too.
  for (const size of Object.keys(SIZES)) {
    const page = await fresh(browser, size);
    await page.goto(`${URL}/r/${id5}`);
    await signInHere(page, 'bob');
    await onFirstScreen(page, size, ['#command', '#hidden-count', '#confirm-read', '#approve-button', '#reject-button']);
    await shot(page, `request-hidden-${size}`);
    await page.context().close();
  }

  // ---- Approve through a signed action link; refuse reused, forwarded, changed, expired ones.
  const idA = run('proxmox-host:hubris', 'systemctl restart pve-ha-crm', 'hermes', 'restart the HA manager');
  untilState(idA, ['pending_approval']);
  const mA = untilMessage(idA, '/json');
  const forwarded = await fresh(browser, 'phone');
  await forwarded.goto(mA.approve_url);
  expect(await forwarded.isVisible('#signin-action'), 'a forwarded link, signed out: the sign-in form says nothing is decided yet');
  expect(sql(`SELECT state FROM airlock.executions WHERE id = ${idA}`) === 'pending_approval' &&
    sql(`SELECT count(*) FROM airlock.action_links WHERE execution_id = ${idA} AND used_at IS NOT NULL`) === '0',
    '... and nothing was decided or used');
  await forwarded.context().close();
  const viaLink = await fresh(browser, 'phone');
  await viaLink.goto(mA.approve_url);
  await signInHere(viaLink, 'bob');
  expect(await viaLink.isVisible('#action-form'), 'signed in, the confirmation page');
  expect(sql(`SELECT state FROM airlock.executions WHERE id = ${idA}`) === 'pending_approval', 'which decided nothing yet');
  await viaLink.fill('#action-form input[name=note]', 'from my phone');
  await Promise.all([viaLink.waitForNavigation(), viaLink.click('#action-confirm')]);
  expect(/approve via link: approved/.test(await viaLink.textContent('#notice')), 'confirmed: approved through the link');
  expect(sql(`SELECT approver || ' ' || reason FROM airlock.approvals WHERE execution_id = ${idA}`) === 'bob from my phone',
    'as bob, with his note');
  await viaLink.goto(mA.approve_url);
  expect(/already used/.test(await viaLink.textContent('#action-problem')) && !(await viaLink.$('#action-form')),
    'the same link again: refused, no form');
  await viaLink.context().close();
  const idB = run('proxmox-host:hubris', 'systemctl restart pve-lxc-syscalld', 'hermes', 'restart syscalld');
  untilState(idB, ['pending_approval']);
  const mB = untilMessage(idB, '/alice');
  const other = await fresh(browser, 'desktop');
  await other.goto(mB.approve_url);
  await signInHere(other, 'bob');
  expect(/this link was sent to alice/.test(await other.textContent('#action-problem')) && !(await other.$('#action-form')),
    'a link sent to alice, forwarded to bob: refused');
  const mB2 = untilMessage(idB, '/json');
  sql(`UPDATE airlock.executions SET payload_hash = md5(payload_hash) WHERE id = ${idB}`);
  await other.goto(mB2.approve_url);
  expect(/changed since this link was sent/.test(await other.textContent('#action-problem')) && !(await other.$('#action-form')),
    'a link for a payload the request no longer has: refused');
  const idE = run('proxmox-host:hubris', 'systemctl restart pvefw-logger', 'shorty', 'restart the firewall logger');
  untilState(idE, ['pending_approval']);
  const mE = untilMessage(idE, '/json');
  untilState(idE, ['expired']);
  await other.goto(mE.approve_url);
  expect(/is expired now/.test(await other.textContent('#action-problem')) && !(await other.$('#action-form')),
    'a link whose request expired: refused');
  expect(sql(`SELECT count(*) FROM airlock.approvals WHERE execution_id IN (${idB}, ${idE})`) === '0',
    'none of the refused links decided anything');
  await other.context().close();

  // ---- The queue: filter it, decide the chosen ones at once.
  const v1 = run('vm:web01', 'apt-get install -y pkg-browser-bulk-1', 'hermes', 'bulk one');
  const v2 = run('vm:web01', 'apt-get install -y pkg-browser-bulk-2', 'hermes', 'bulk two');
  const h1 = run('proxmox-host:hubris', 'apt-get install -y pkg-browser-bulk-3', 'hermes', 'bulk three');
  for (const id of [v1, v2, h1]) untilState(id, ['pending_approval']);
  for (const size of Object.keys(SIZES)) {
    const page = await fresh(browser, size);
    await page.goto(`${URL}/`);
    await signInHere(page, 'alice');
    await shot(page, `pending-${size}`);
    await page.context().close();
  }
  const q = await fresh(browser, 'desktop');
  await q.goto(`${URL}/`);
  await signInHere(q, 'alice');
  await q.click('#filters summary');
  await q.fill('#filter-form input[name=target]', 'vm:*');
  await Promise.all([q.waitForNavigation(), q.click('#filter-form button')]);
  const listed = await q.$$eval('li.req:not(.held)', (els) => els.map((e) => e.dataset.id));
  expect(listed.includes(v1) && listed.includes(v2) && !listed.includes(h1), `the filter vm:* lists the two on VMs (${listed})`);
  await q.check(`li.req[data-id="${v1}"] input.pick`);
  await q.check(`li.req[data-id="${v2}"] input.pick`);
  await q.fill('#bulk input[name=reason]', 'browser bulk');
  await Promise.all([q.waitForNavigation(), q.click('#bulk-approve')]);
  expect((await q.getAttribute('#bulk-summary', 'data-decided')) === '2', 'both chosen requests are decided at once');
  expect(sql(`SELECT count(*) FROM airlock.execution_events WHERE execution_id IN (${v1}, ${v2}) AND to_state = 'approved'`) === '2',
    'one chained approval event each');
  expect(sql(`SELECT state FROM airlock.executions WHERE id = ${h1}`) === 'pending_approval', 'the one filtered out still waits');
  await shot(q, 'bulk-result-desktop');
  await q.context().close();

  // ---- The other pages, at both sizes, for a person to look at.
  for (const size of Object.keys(SIZES)) {
    const page = await fresh(browser, size);
    await page.goto(`${URL}/login`);
    await shot(page, `signin-${size}`);
    await signInHere(page, 'alice');
    for (const [name, path] of [['agent', '/agents/hermes'], ['history', '/history?q=pkg'], ['audit', '/audit'],
      ['side-door', '/side-door'], ['pending-filtered', '/?target=vm%3A*&state=open']]) {
      await page.goto(`${URL}${path}`);
      await shot(page, `${name}-${size}`);
    }
    await page.context().close();
  }

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
