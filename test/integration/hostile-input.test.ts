import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import { startTestApp, type TestAppliance } from '../helpers/appliance.ts';
import { hostileCorpus, validJpeg, type HostileCase } from '../helpers/hostile-images.ts';
import { submission } from '../helpers/inputs.ts';

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
/** Cases also sent as `items[0]`: one of each way of being refused. */
const AS_ITEM = new Set([
  'empty string',
  'truncated JPEG',
  'PNG bomb 30000×30000',
  'GIF',
  'invalid base64 characters',
  'base64 over 15 MB',
]);

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: Array<{ field: string; message: string }>;
}

/** Reads a problem reply, checking its media type, size, request id and that it echoes none of `input`. */
async function readProblem(response: Response, input = ''): Promise<Problem> {
  assert.equal(response.headers.get('content-type'), PROBLEM_TYPE);
  const text = await response.text();
  assert.ok(text.length < 2048, `a problem body of ${text.length} characters`);
  for (const slice of echoProbes(input)) assert.ok(!text.includes(slice), `the problem body echoes the input: ${JSON.stringify(slice)}`);
  const problem = JSON.parse(text) as Problem;
  assert.equal(problem.status, response.status);
  assert.match(problem.requestId, /^req_/);
  assert.equal(response.headers.get('x-request-id'), problem.requestId);
  return problem;
}

/** Slices of an input (as sent and as decoded text) that must never appear in a reply. */
function echoProbes(input: string): string[] {
  const payload = input.replace(/^data:[^,]*,/i, '');
  const decoded = Buffer.from(payload, 'base64').toString('latin1');
  const probes: string[] = [];
  for (const text of [payload, decoded]) {
    if (text.length < 8) continue;
    const width = Math.min(40, text.length);
    for (const start of [0, Math.floor((text.length - width) / 2), text.length - width]) probes.push(text.slice(start, start + width));
  }
  return probes.filter((probe) => /[\x21-\x7e]{8}/.test(probe));
}

async function generationDirs(dataDir: string): Promise<string[]> {
  try {
    return (await readdir(join(dataDir, 'images'))).filter((name) => name.startsWith('gen_'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Asserts that no request so far stored anything or moved a credit. */
async function assertNothingHappened(app: TestAppliance): Promise<void> {
  const list = await app.call('GET', '/api/v1/try-on');
  assert.equal(list.status, 200);
  assert.deepEqual(((await list.json()) as { data: unknown[] }).data, []);
  assert.deepEqual(await generationDirs(app.dataDir), []);
  assert.deepEqual(Object.keys(app.appliance.store.state.generations), []);
  assert.deepEqual(
    app.appliance.store.state.ledger.map((entry) => entry.type),
    ['trial'],
  );
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as { creditsRemaining: number; creditsReserved: number };
  assert.equal(account.creditsRemaining, 25);
  assert.equal(account.creditsReserved, 0);
}

async function assertHealthy(app: TestAppliance): Promise<void> {
  const health = await app.call('GET', '/api/v1/health', { key: null });
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, 'ok');
}

async function submitRefused(app: TestAppliance, hostile: HostileCase, field: 'selfie' | 'items[0]'): Promise<Problem> {
  const body = field === 'selfie' ? await submission({ selfie: hostile.value }) : await submission({ items: [hostile.value] });
  const response = await app.call('POST', '/api/v1/try-on', { body });
  assert.equal(response.status, hostile.status, `${hostile.name} as ${field}`);
  const problem = await readProblem(response, hostile.value);
  assert.equal(problem.code, hostile.code);
  assert.equal(problem.errors?.[0]?.field, field);
  return problem;
}

test('every refused hostile image gets its problem, echoes nothing, and stores nothing', async (t) => {
  const app = await startTestApp(t);
  const refused = (await hostileCorpus()).filter((hostile) => hostile.status !== 0);
  assert.ok(refused.length >= 20, `the corpus has ${refused.length} refused cases`);
  for (const hostile of refused) {
    await t.test(`${hostile.name} → ${hostile.status} ${hostile.code}`, async () => {
      await submitRefused(app, hostile, 'selfie');
      if (AS_ITEM.has(hostile.name)) await submitRefused(app, hostile, 'items[0]');
    });
  }
  await assertHealthy(app);
  await assertNothingHappened(app);
  assert.equal(app.appliance.store.state.ledger.length, 1);
});

test('the PNG bomb is refused from its header alone', async (t) => {
  const app = await startTestApp(t);
  const bomb = (await hostileCorpus()).find((hostile) => hostile.name.startsWith('PNG bomb'));
  assert.ok(bomb);
  assert.ok(bomb.value.length < 64 * 1024, `the bomb is ${bomb.value.length} base64 characters`);
  const body = await submission({ selfie: bomb.value });
  const started = performance.now();
  const response = await app.call('POST', '/api/v1/try-on', { body });
  const elapsedMs = performance.now() - started;
  assert.equal(response.status, 422);
  assert.equal((await readProblem(response, bomb.value)).code, 'invalid_image');
  t.diagnostic(`PNG bomb 30000×30000 refused in ${elapsedMs.toFixed(1)} ms`);
  await assertNothingHappened(app);
});

test('accepted hostile images are stored re-encoded: no polyglot payload and no EXIF survive', async (t) => {
  const app = await startTestApp(t);
  const accepted = (await hostileCorpus()).filter((hostile) => hostile.status === 0);
  assert.ok(accepted.length >= 5);
  const store = app.appliance.store;
  for (const hostile of accepted) {
    await t.test(hostile.name, async () => {
      const asItem = hostile.payload !== undefined && hostile.name.includes('HTML');
      const body = asItem
        ? await submission({ selfie: hostile.value, items: [hostile.value] })
        : await submission({ selfie: hostile.value });
      const response = await app.call('POST', '/api/v1/try-on', { body });
      assert.equal(response.status, 202, await response.clone().text());
      const { genId } = (await response.json()) as { genId: string };
      const done = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as { status: string };
      assert.equal(done.status, 'complete');
      const inputs = store.state.generations[genId]?.inputs;
      assert.ok(inputs, 'the inputs are kept');
      for (const stored of asItem ? [inputs.selfie, inputs.items[0]!] : [inputs.selfie]) {
        const bytes = await readFile(join(app.dataDir, stored.file));
        if (hostile.payload !== undefined)
          assert.ok(!bytes.includes(Buffer.from(hostile.payload, 'latin1')), `${stored.file} still holds the payload`);
        const metadata = await sharp(bytes).metadata();
        assert.equal(metadata.exif, undefined, `${stored.file} has EXIF`);
        assert.equal(metadata.xmp, undefined, `${stored.file} has XMP`);
        assert.equal(metadata.iptc, undefined, `${stored.file} has IPTC`);
        assert.equal(metadata.format, stored.format);
      }
    });
  }
  await assertHealthy(app);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as { creditsRemaining: number; creditsReserved: number };
  assert.equal(account.creditsRemaining, 25 - accepted.length);
  assert.equal(account.creditsReserved, 0);
});

test('body limits: too large, not JSON, malformed JSON and an oversized image each change nothing', async (t) => {
  const app = await startTestApp(t, {
    config: { bodyLimitBytes: 1_000_000, imageLimits: { maxBytes: 200_000, maxPixels: 40_000_000, minSide: 256 } },
  });
  const valid = await submission();

  await t.test('a JSON body over the limit is 413', async () => {
    const huge = JSON.stringify({ ...valid, selfie: 'A'.repeat(1_100_000) });
    const response = await app.call('POST', '/api/v1/try-on', { body: huge });
    assert.equal(response.status, 413);
    assert.equal((await readProblem(response, huge)).code, 'payload_too_large');
  });

  await t.test('a chunked JSON body over the limit (no Content-Length) is 413', async () => {
    const huge = JSON.stringify({ ...valid, selfie: 'B'.repeat(1_100_000) });
    const bytes = new TextEncoder().encode(huge);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
        controller.close();
      },
    });
    const response = await fetch(`${app.url}/api/v1/try-on`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.adminKey}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    assert.equal(response.status, 413);
    assert.equal((await readProblem(response, huge)).code, 'payload_too_large');
  });

  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    await t.test(`a ${contentType} body is 415`, async () => {
      const response = await app.call('POST', '/api/v1/try-on', { body: JSON.stringify(valid), headers: { 'content-type': contentType } });
      assert.equal(response.status, 415);
      assert.equal((await readProblem(response, valid.selfie as string)).code, 'unsupported_media_type');
    });
  }

  for (const malformed of ['{"selfie": ', '{selfie: 1}', "{'size': 'M'}", '[1,]', '{"size":"M"}}']) {
    await t.test(`malformed JSON ${JSON.stringify(malformed)} is 400`, async () => {
      const response = await app.call('POST', '/api/v1/try-on', { body: malformed });
      assert.equal(response.status, 400);
      assert.equal((await readProblem(response)).code, 'invalid_request');
    });
  }

  await t.test('an image that decodes past imageLimits.maxBytes is 413 naming its field', async () => {
    const padded = Buffer.concat([await validJpeg(384, 512), Buffer.alloc(250_000, 0x41)]).toString('base64');
    assert.ok(padded.length < 500_000, 'the body stays under the body limit');
    for (const field of ['selfie', 'items[0]'] as const) {
      const body = field === 'selfie' ? await submission({ selfie: padded }) : await submission({ items: [padded] });
      const response = await app.call('POST', '/api/v1/try-on', { body });
      assert.equal(response.status, 413, field);
      const problem = await readProblem(response, padded);
      assert.equal(problem.code, 'payload_too_large');
      assert.equal(problem.errors?.[0]?.field, field);
    }
  });

  await assertNothingHappened(app);
  await assertHealthy(app);
  const control = await app.call('POST', '/api/v1/try-on', { body: valid });
  assert.equal(control.status, 202, 'a valid submission still works under these limits');
});

test('field validation: sizes, several bad fields at once, unknown fields, item counts and webhook URLs', async (t) => {
  const app = await startTestApp(t);

  async function refused(extra: Record<string, unknown>, fields: string[], label: string): Promise<void> {
    const response = await app.call('POST', '/api/v1/try-on', { body: await submission(extra) });
    assert.equal(response.status, 422, label);
    const problem = await readProblem(response);
    assert.equal(problem.code, 'validation_failed', label);
    const listed = (problem.errors ?? []).map((error) => error.field);
    for (const field of fields) assert.ok(listed.includes(field), `${label}: errors ${JSON.stringify(listed)} should list ${field}`);
    for (const error of problem.errors ?? []) assert.ok(error.message.length > 0);
  }

  for (const size of ['31', '66', 'W50', 'MM', '', 'W23', '28', 'XXXL', '5XL', 'M L', 'w 32'] as const) {
    await t.test(`size ${JSON.stringify(size)} is refused`, () => refused({ size }, ['size'], `size ${JSON.stringify(size)}`));
  }
  await t.test('a size that is not a string is refused', () => refused({ size: 38 }, ['size'], 'size 38 as a number'));
  await t.test('a bad personSize is refused', () => refused({ personSize: 'W50' }, ['personSize'], 'personSize W50'));

  await t.test('several bad fields are all listed', async () => {
    await refused(
      { size: 'MM', fit: 'tight', occasion: 'wedding', outputFormat: 'gif', seed: -1, styling: ['inside-out'], webhookUrl: 'ftp://x' },
      ['size', 'fit', 'occasion', 'outputFormat', 'seed', 'styling[0]', 'webhookUrl'],
      'seven bad fields',
    );
  });

  await t.test('unknown fields are refused by name', async () => {
    await refused({ colour: 'red' }, ['colour'], 'unknown field colour');
    const response = await app.call('POST', '/api/v1/try-on', {
      body: `{"__proto__":{"admin":true},${JSON.stringify(await submission()).slice(1)}`,
    });
    assert.equal(response.status, 422, '__proto__');
    assert.deepEqual(
      ((await readProblem(response)).errors ?? []).map((error) => error.field),
      ['__proto__'],
    );
  });

  await t.test('items with 0 or 5 entries, or not an array, are refused', async () => {
    const item = ((await submission()).items as string[])[0]!;
    await refused({ items: [] }, ['items'], 'no items');
    await refused({ items: [item, item, item, item, item] }, ['items'], 'five items');
    await refused({ items: item }, ['items'], 'items as a string');
  });

  await t.test('impossible outfits and contradictory styling are refused before any credit moves', async () => {
    const item = ((await submission()).items as string[])[0]!;
    await refused({ items: [item, item], categories: ['top', 'top'] }, ['categories'], 'two tops');
    await refused({ items: [item, item, item], categories: ['dress', 'bottom', 'auto'] }, ['categories'], 'a dress and jeans');
    await refused({ items: [item, item, item, item], categories: ['top', 'top', 'dress', 'bottom'] }, ['categories'], 'the audit outfit');
    await refused({ styling: ['tucked', 'untucked'] }, ['styling'], 'tucked and untucked');
    await refused({ styling: ['open', 'closed', 'sleeves-rolled'] }, ['styling'], 'open and closed');
  });

  for (const webhookUrl of [
    'http://169.254.169.254/',
    'ftp://x',
    'http://2852039166/latest/meta-data',
    'http://[fd00:ec2::254]/',
    'http://[::ffff:169.254.169.254]/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://user:pw@example.com/',
    'not a url',
    `http://example.com/${'a'.repeat(2048)}`,
  ]) {
    await t.test(`webhookUrl ${webhookUrl.slice(0, 50)} is refused`, () =>
      refused({ webhookUrl }, ['webhookUrl'], `webhookUrl ${webhookUrl.slice(0, 50)}`),
    );
  }

  await assertNothingHappened(app);

  for (const [size, canonical] of [
    ['m', 'M'],
    ['2XL', 'XXL'],
    ['3xl', '3XL'],
    ['38', '38'],
    ['W32', 'W32'],
  ] as const) {
    await t.test(`size ${size} is accepted as ${canonical}`, async () => {
      const response = await app.call('POST', '/api/v1/try-on', { body: await submission({ size }) });
      assert.equal(response.status, 202, await response.clone().text());
      const { genId } = (await response.json()) as { genId: string };
      assert.equal(app.appliance.store.state.generations[genId]?.params.size, canonical);
      const done = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as { status: string };
      assert.equal(done.status, 'complete');
    });
  }
  await assertHealthy(app);
});
