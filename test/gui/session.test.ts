/**
 * GUI sign-in and the session on /api/v1: cookies are HttpOnly and
 * SameSite=Strict; a session acts as an admin key; state-changing calls need
 * the CSRF token and must come from this site; PIN, shell token, sign-out,
 * revocation; the catalogue routes; the page itself.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startAppliance } from '../../server/appliance.ts';
import { defaultConfig } from '../../server/config.ts';
import { migrate } from '../../server/store/schema.ts';
import { startTestApp, startTestAppliance, tempDataDir } from '../helpers/appliance.ts';
import { browserMissing, launchBrowser, onEveryShopScreen } from './browser.ts';
import { garmentJpeg } from './media.ts';

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/gui/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function session(url: string, body: unknown): Promise<Session> {
  const response = await signIn(url, body);
  assert.equal(response.status, 200, await response.clone().text());
  const setCookie = response.headers.get('set-cookie') ?? '';
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  return { cookie: setCookie.split(';')[0]!, csrf: csrfToken };
}

function withSession(s: Session, method: string, extra: Record<string, string> = {}): RequestInit {
  return { method, headers: { cookie: s.cookie, ...extra } };
}

test('an admin key signs in: the cookie is HttpOnly and SameSite=Strict, and the session acts on /api/v1', async (t) => {
  const ta = await startTestApp(t);
  const response = await signIn(ta.url, { method: 'key', key: ta.adminKey });
  assert.equal(response.status, 200);
  const setCookie = response.headers.get('set-cookie') ?? '';
  assert.match(setCookie, /^fr_session=[A-Za-z0-9_-]{43};/);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.match(setCookie, /Path=\//);
  const s = { cookie: setCookie.split(';')[0]!, csrf: ((await response.json()) as { csrfToken: string }).csrfToken };

  const account = await fetch(`${ta.url}/api/v1/account`, withSession(s, 'GET'));
  assert.equal(account.status, 200);
  const info = (await (await fetch(`${ta.url}/gui/api/session`, withSession(s, 'GET'))).json()) as Record<string, unknown>;
  assert.equal(info.signedIn, true);
  assert.equal(info.csrfToken, s.csrf);
  assert.equal(info.via, 'key');

  const created = await fetch(`${ta.url}/api/v1/keys`, {
    method: 'POST',
    headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, 'content-type': 'application/json', origin: ta.url },
    body: JSON.stringify({ name: 'made by the GUI', scope: 'standard' }),
  });
  assert.equal(created.status, 201, 'a state-changing call with the CSRF token from this origin works');
});

test('a state-changing call with the session but without the CSRF token, or from another site, is refused with problem+json', async (t) => {
  const ta = await startTestApp(t);
  const s = await session(ta.url, { method: 'key', key: ta.adminKey });
  const post = (headers: Record<string, string>) =>
    fetch(`${ta.url}/api/v1/keys`, {
      method: 'POST',
      headers: { cookie: s.cookie, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ name: 'forged', scope: 'admin' }),
    });
  const cases: [string, Record<string, string>][] = [
    ['no token', {}],
    ['a cross-site request with no token', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    ['a wrong token', { 'x-csrf-token': `${s.csrf.slice(0, -1)}x` }],
    ['the right token from another origin', { 'x-csrf-token': s.csrf, origin: 'https://evil.example' }],
    ['the right token, cross-site', { 'x-csrf-token': s.csrf, 'sec-fetch-site': 'cross-site' }],
  ];
  for (const [what, headers] of cases) {
    const response = await post(headers);
    assert.equal(response.status, 403, what);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8', what);
    const problem = (await response.json()) as { code: string; requestId: string };
    assert.equal(problem.code, 'forbidden', what);
    assert.ok(problem.requestId, what);
  }
  const names = ((await (await ta.call('GET', '/api/v1/keys')).json()) as { name: string }[]).map((key) => key.name);
  assert.ok(!names.includes('forged'), 'no refused request created a key');
  const erase = await fetch(`${ta.url}/gui/api/session`, withSession(s, 'DELETE'));
  assert.equal(erase.status, 403, 'signing out needs the token too');
  assert.equal(
    (await fetch(`${ta.url}/api/v1/account`, withSession(s, 'GET', { 'sec-fetch-site': 'cross-site' }))).status,
    200,
    'reads need no token',
  );
});

test('sign-in refuses unknown, standard and cross-site attempts; a bearer key still wins over a cookie', async (t) => {
  const ta = await startTestApp(t);
  assert.equal((await signIn(ta.url, { method: 'key', key: 'fr_live_nope' })).status, 401);
  const standard = (await (await ta.call('POST', '/api/v1/keys', { body: { name: 'till', scope: 'standard' } })).json()) as { key: string };
  const refused = await signIn(ta.url, { method: 'key', key: standard.key });
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get('set-cookie'), null);
  assert.equal((await signIn(ta.url, { method: 'key', key: ta.adminKey }, { 'sec-fetch-site': 'cross-site' })).status, 403);
  assert.equal((await signIn(ta.url, { method: 'magic' })).status, 422);
  assert.equal(
    (await fetch(`${ta.url}/api/v1/account`, { headers: { cookie: 'fr_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } })).status,
    401,
  );

  const s = await session(ta.url, { method: 'key', key: ta.adminKey });
  const asStandard = await fetch(`${ta.url}/api/v1/keys`, { headers: { cookie: s.cookie, authorization: `Bearer ${standard.key}` } });
  assert.equal(asStandard.status, 403, 'the bearer key is used, not the admin session');
});

test('the PIN: set at first sign-in, wrong PINs refused and then throttled, a right one signs in as the GUI key', async (t) => {
  const ta = await startTestApp(t);
  const before = await signIn(ta.url, { method: 'pin', pin: '1234' });
  assert.equal(before.status, 409, 'no PIN yet');
  assert.equal((await signIn(ta.url, { method: 'key', key: ta.adminKey, newPin: '12' })).status, 422, 'too short');
  await session(ta.url, { method: 'key', key: ta.adminKey, newPin: '482913' });

  const s = await session(ta.url, { method: 'pin', pin: '482913' });
  const info = (await (await fetch(`${ta.url}/gui/api/session`, withSession(s, 'GET'))).json()) as { via: string; keyName: string };
  assert.equal(info.via, 'pin');
  assert.match(info.keyName, /shop-floor GUI/);

  for (let i = 0; i < 5; i++) assert.equal((await signIn(ta.url, { method: 'pin', pin: '000000' })).status, 401);
  const throttled = await signIn(ta.url, { method: 'pin', pin: '482913' });
  assert.equal(throttled.status, 429, 'after five wrong PINs even the right one waits');
  assert.ok(Number(throttled.headers.get('retry-after')) > 0);
});

test('changing the PIN needs a session with its CSRF token', async (t) => {
  const ta = await startTestApp(t);
  const s = await session(ta.url, { method: 'key', key: ta.adminKey });
  const put = (headers: Record<string, string>) =>
    fetch(`${ta.url}/gui/api/pin`, {
      method: 'PUT',
      headers: { cookie: s.cookie, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ pin: '7777' }),
    });
  assert.equal((await put({})).status, 403);
  assert.equal((await put({ 'x-csrf-token': s.csrf })).status, 204);
  await session(ta.url, { method: 'pin', pin: '7777' });
});

test('sign-out ends the session, and revoking its key ends it too', async (t) => {
  const ta = await startTestApp(t);
  const s = await session(ta.url, { method: 'key', key: ta.adminKey });
  const out = await fetch(`${ta.url}/gui/api/session`, withSession(s, 'DELETE', { 'x-csrf-token': s.csrf }));
  assert.equal(out.status, 204);
  assert.match(out.headers.get('set-cookie') ?? '', /Max-Age=0/);
  assert.equal((await fetch(`${ta.url}/api/v1/account`, withSession(s, 'GET'))).status, 401);

  const second = (await (await ta.call('POST', '/api/v1/keys', { body: { name: 'manager', scope: 'admin' } })).json()) as {
    id: string;
    key: string;
  };
  const s2 = await session(ta.url, { method: 'key', key: second.key });
  assert.equal((await fetch(`${ta.url}/api/v1/account`, withSession(s2, 'GET'))).status, 200);
  assert.equal((await ta.call('DELETE', `/api/v1/keys/${second.id}`)).status, 204);
  assert.equal((await fetch(`${ta.url}/api/v1/account`, withSession(s2, 'GET'))).status, 401);
});

test('the Electron shell’s launch token signs in; a wrong one does not', async (t) => {
  const dataDir = await tempDataDir();
  const appliance = await startAppliance({
    config: defaultConfig({ port: 0, dataDir }),
    engines: [],
    log: () => undefined,
    guiLaunchToken: 'launch-token-for-this-test-0123456789abcdef',
  });
  t.after(() => appliance.close());
  const info = (await (await fetch(`${appliance.url}/gui/api/session`)).json()) as { signedIn: boolean; shell: boolean };
  assert.deepEqual([info.signedIn, info.shell], [false, true]);
  assert.equal((await signIn(appliance.url, { method: 'shell', token: 'launch-token-for-this-test-0123456789abcdeX' })).status, 401);
  const s = await session(appliance.url, { method: 'shell', token: 'launch-token-for-this-test-0123456789abcdef' });
  assert.equal((await fetch(`${appliance.url}/api/v1/keys`, withSession(s, 'GET'))).status, 200, 'the shell acts as an admin');
});

test('without a launch token the shell method is refused', async (t) => {
  const ta = await startTestApp(t);
  assert.equal((await signIn(ta.url, { method: 'shell', token: '' })).status, 401);
  assert.equal((await signIn(ta.url, { method: 'shell', token: 'anything' })).status, 401);
});

test('the catalogue: add with a photo, list, read the photo, refuse bad fields, remove', async (t) => {
  const ta = await startTestApp(t);
  const s = await session(ta.url, { method: 'key', key: ta.adminKey });
  const add = (body: unknown) =>
    fetch(`${ta.url}/gui/api/garments`, {
      method: 'POST',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const photo = (await garmentJpeg()).toString('base64');
  const bad = await add({ name: '', category: 'hat', sizes: ['M', 'huge'], image: photo });
  assert.equal(bad.status, 422);
  const fields = ((await bad.json()) as { errors: { field: string }[] }).errors.map((error) => error.field);
  assert.deepEqual(fields, ['name', 'category', 'sizes[1]']);

  const created = await add({ name: ' Linen shirt ', category: 'top', sizes: ['m', 'L', 'M'], image: photo });
  assert.equal(created.status, 201);
  const garment = (await created.json()) as { id: string; name: string; sizes: string[]; imageUrl: string };
  assert.equal(garment.name, 'Linen shirt');
  assert.deepEqual(garment.sizes, ['M', 'L']);
  const list = (await (await fetch(`${ta.url}/gui/api/garments`, withSession(s, 'GET'))).json()) as { id: string }[];
  assert.deepEqual(
    list.map((item) => item.id),
    [garment.id],
  );
  const image = await fetch(`${ta.url}${garment.imageUrl}`, withSession(s, 'GET'));
  assert.equal(image.status, 200);
  assert.equal(image.headers.get('content-type'), 'image/jpeg');
  assert.ok((await image.arrayBuffer()).byteLength > 1000);
  assert.equal((await fetch(`${ta.url}/gui/api/garments`)).status, 401, 'no session, no catalogue');

  const removed = await fetch(`${ta.url}/gui/api/garments/${garment.id}`, withSession(s, 'DELETE', { 'x-csrf-token': s.csrf }));
  assert.equal(removed.status, 204);
  assert.equal((await fetch(`${ta.url}${garment.imageUrl}`, withSession(s, 'GET'))).status, 404);
});

test('GET / serves the GUI with a strict CSP, and its bundle', async (t) => {
  const ta = await startTestApp(t);
  const page = await fetch(`${ta.url}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(await page.text(), /<script type="module" src="\/app.js"><\/script>/);
  const js = await fetch(`${ta.url}/app.js`);
  assert.match(js.headers.get('content-type') ?? '', /javascript/);
  assert.match(await js.text(), /gui\/api\/session/);
  const css = await fetch(`${ta.url}/app.css`);
  assert.match(css.headers.get('content-type') ?? '', /text\/css/);
});

test('a schema 3 state gains the GUI part on migration', () => {
  const migrated = migrate({
    version: 3,
    installation: null,
    keys: [],
    ledger: [],
    ledgerBase: null,
    generations: {},
    idempotency: {},
    webhookSecrets: [],
    webhookEvents: {},
    vouchers: {},
  });
  assert.equal(migrated.version, 4);
  assert.deepEqual(migrated.gui, { pinHash: null, keyId: null, sessions: {}, garments: {} });
});

test('PIN guessing: 300 parallel wrong PINs get 5 real tries; the wait survives a restart, stays short, and the key lifts it', async (t) => {
  let now = Date.parse('2026-11-24T10:00:00Z');
  const clock = () => new Date(now);
  const dataDir = await tempDataDir();
  const first = await startTestAppliance(t, { dataDir, clock });
  await session(first.url, { method: 'key', key: first.adminKey, newPin: '482913' });

  const guesses = await Promise.all(Array.from({ length: 300 }, (_, i) => signIn(first.url, { method: 'pin', pin: String(100000 + i) })));
  const statuses = guesses.map((response) => response.status);
  assert.equal(statuses.filter((status) => status === 401).length, 5, 'only the five free tries reach the hash');
  assert.equal(statuses.filter((status) => status === 429).length, 295);
  assert.equal((await signIn(first.url, { method: 'pin', pin: '482913' })).status, 429, 'the right PIN waits too');
  await first.appliance.close();

  const second = await startTestApp(t, { dataDir, clock });
  const waiting = await signIn(second.url, { method: 'pin', pin: '482913' });
  assert.equal(waiting.status, 429, 'a restart does not reset the count');
  assert.ok(Number(waiting.headers.get('retry-after')) <= 30, 'the first wait is 30 s');
  // Many more wrong PINs, each after its wait: the wait doubles but never passes five minutes.
  for (let i = 0; i < 8; i++) {
    now += 5 * 60_000;
    assert.equal((await signIn(second.url, { method: 'pin', pin: '000000' })).status, 401);
  }
  const capped = await signIn(second.url, { method: 'pin', pin: '482913' });
  assert.equal(capped.status, 429);
  assert.ok(Number(capped.headers.get('retry-after')) <= 300, `waits ${capped.headers.get('retry-after')} s`);
  now += 5 * 60_000;
  await session(second.url, { method: 'pin', pin: '482913' });

  for (let i = 0; i < 5; i++) await signIn(second.url, { method: 'pin', pin: '000000' });
  assert.equal((await signIn(second.url, { method: 'pin', pin: '482913' })).status, 429);
  await session(second.url, { method: 'key', key: first.adminKey });
  await session(second.url, { method: 'pin', pin: '482913' });
});

test('staff signed in with the PIN do the shop floor’s work and no administration; the admin key does both', async (t) => {
  const ta = await startTestApp(t);
  const admin = await session(ta.url, { method: 'key', key: ta.adminKey, newPin: '482913' });
  const staff = await session(ta.url, { method: 'pin', pin: '482913' });
  const asStaff = (method: string, path: string, body?: unknown) =>
    fetch(`${ta.url}${path}`, {
      method,
      headers: { cookie: staff.cookie, 'x-csrf-token': staff.csrf, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const garment = { name: 'Linen shirt', category: 'top', sizes: ['M'], image: (await garmentJpeg()).toString('base64') };
  for (const [method, path, body] of [
    ['GET', '/api/v1/try-on'],
    ['GET', '/api/v1/account'],
    ['GET', '/api/v1/engines'],
    ['GET', '/gui/api/garments'],
    ['POST', '/gui/api/garments', garment],
    ['GET', '/gui/api/settings'],
  ] as const) {
    const response = await asStaff(method, path, body);
    assert.ok(response.status < 300, `staff: ${method} ${path} is ${response.status}`);
  }
  for (const [method, path, body] of [
    ['POST', '/api/v1/keys', { name: 'sneaky', scope: 'admin' }],
    ['GET', '/api/v1/keys'],
    ['GET', '/api/v1/webhooks/secret'],
    ['POST', '/api/v1/webhooks/secret/rotate'],
    ['GET', '/api/v1/ledger'],
    ['POST', '/api/v1/credits/redeem', { voucher: 'frv1.x.y.z' }],
    ['PUT', '/gui/api/pin', { pin: '1111' }],
    ['PUT', '/gui/api/settings', { eraseOnNewCustomer: true }],
  ] as const) {
    const response = await asStaff(method, path, body);
    assert.equal(response.status, 403, `staff: ${method} ${path}`);
  }
  const created = await fetch(`${ta.url}/api/v1/keys`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'till', scope: 'standard' }),
  });
  assert.equal(created.status, 201, 'the admin key’s session may');
});

test(
  'staff with the PIN see no administration; a PIN session locks after five idle minutes, activity keeps it open',
  { skip: browserMissing() ?? false, timeout: 180_000 },
  async (t) => {
    const ta = await startTestApp(t);
    await session(ta.url, { method: 'key', key: ta.adminKey, newPin: '482913' });
    const browser = await launchBrowser(t);
    await onEveryShopScreen(t, browser, 'staff-settings', async (page) => {
      await page.clock.install();
      await page.goto(`${ta.url}/`);
      await page.locator('#pin').fill('482913');
      await page.locator('#pin').press('Enter');
      await page.getByRole('navigation', { name: 'Screens' }).waitFor();
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.locator('#staff-note').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0, 'staff create no keys');
      assert.equal(await page.locator('#set-pin').count(), 0, 'nor change the PIN');
      await page.clock.fastForward('04:00');
      await page.mouse.click(5, 300);
      await page.clock.fastForward('04:00');
      assert.equal(await page.getByRole('navigation', { name: 'Screens' }).count(), 1, 'eight minutes with a touch after four: still open');
      await page.clock.fastForward('05:01');
      await page.locator('#pin').waitFor();
      assert.equal(await page.getByRole('navigation', { name: 'Screens' }).count(), 0, 'five idle minutes: locked');
    });
  },
);
