/**
 * Taking the picture home: a short-lived link, shown as a QR code, that downloads one try-on's picture with no
 * key, and stops working when replaced, expired or erased.
 */
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { startTestApp } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

test('a take-home link downloads the picture without a key until it is replaced, expires or the picture is erased', async (t) => {
  let now = Date.now();
  const app = await startTestApp(t, { clock: () => new Date(now) });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  assert.equal(((await (await app.call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as { status: string }).status, 'complete');
  const share = async () => {
    const response = await fetch(`${app.url}/gui/api/try-on/${genId}/share`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.adminKey}` },
    });
    assert.equal(response.status, 201);
    return (await response.json()) as { url: string; expiresAt: string; qrSvg: string };
  };
  const first = await share();
  assert.match(first.qrSvg, /^<svg [^>]*viewBox="0 0 \d+ \d+"/);
  assert.equal((first as { reachable?: boolean }).reachable, false, 'bound to 127.0.0.1, phones cannot reach it, and the reply says so');
  assert.ok(Date.parse(first.expiresAt) <= now + 60 * 60_000 + 1000, 'an hour at most');
  const link = new URL(first.url);
  assert.match(link.pathname, /^\/take\/gen_[0-9A-Z]{26}\.[\w-]{43}$/);
  const lan = Object.values(networkInterfaces())
    .flat()
    .some((entry) => entry?.family === 'IPv4' && !entry.internal);
  if (lan) assert.notEqual(link.hostname, '127.0.0.1', 'a phone cannot open the appliance’s loopback address');

  const take = (path: string) => fetch(`${app.url}${path}`);
  const taken = await take(link.pathname);
  assert.equal(taken.status, 200);
  assert.equal(taken.headers.get('cache-control'), 'no-store');
  assert.match(taken.headers.get('content-disposition') ?? '', /^attachment; filename="try-on\.jpg"$/);
  const picture = Buffer.from(await (await app.call('GET', `/api/v1/try-on/${genId}/image`)).arrayBuffer());
  assert.deepEqual(Buffer.from(await taken.arrayBuffer()), picture);

  const tampered = link.pathname.slice(0, -3) + (link.pathname.endsWith('AAA') ? 'BBB' : 'AAA');
  assert.equal((await take(tampered)).status, 404);
  const second = await share();
  assert.equal((await take(link.pathname)).status, 404, 'a newer link replaces the older one');
  const current = new URL(second.url).pathname;
  assert.equal((await take(current)).status, 200);
  now += 61 * 60_000;
  assert.equal((await take(current)).status, 404, 'an hour later the link is gone');
  now -= 61 * 60_000;
  const last = new URL((await share()).url).pathname;
  assert.equal((await take(last)).status, 200);
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${genId}`)).status, 204);
  assert.equal((await take(last)).status, 404, 'erasing the picture ends its link');
  const erased = await fetch(`${app.url}/gui/api/try-on/${genId}/share`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.adminKey}` },
  });
  assert.equal(erased.status, 409, 'an erased picture cannot be shared');
});
