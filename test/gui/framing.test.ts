/**
 * POST /gui/api/framing over real HTTP with the real vision models: fixture
 * photos from ../shared downscaled as the GUI sends them (about 256 px on the
 * long side), framed well, cut at the face, moved to one side, with two
 * people and with no one; and its refusals as problem+json (no session, no
 * CSRF token, too big, not a JPEG).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import type { FramingAdvice } from '../../server/gui/contract.ts';
import { FRAMING_MAX_BYTES, FRAMING_MESSAGES } from '../../server/gui/framing.ts';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance.ts';

const PEOPLE = resolve(import.meta.dirname, '../../../shared/fixtures/people');
const noFixtures = existsSync(PEOPLE) ? false : `no fixture photos at ${PEOPLE} (the ../shared checkout is absent)`;
const BACKGROUND = { r: 236, g: 236, b: 236 };

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(ta: TestAppliance): Promise<Session> {
  const response = await fetch(`${ta.url}/gui/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'key', key: ta.adminKey }),
  });
  assert.equal(response.status, 200);
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  return { cookie: (response.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: csrfToken };
}

function post(ta: TestAppliance, body: Buffer, headers: Record<string, string>): Promise<Response> {
  return fetch(`${ta.url}/gui/api/framing`, {
    method: 'POST',
    headers: { 'content-type': 'image/jpeg', ...headers },
    body: new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength),
  });
}

async function advise(ta: TestAppliance, s: Session, frame: Buffer): Promise<FramingAdvice> {
  const response = await post(ta, frame, { cookie: s.cookie, 'x-csrf-token': s.csrf });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const advice = JSON.parse(text) as FramingAdvice;
  assert.equal(advice.message, FRAMING_MESSAGES[advice.advice]);
  return advice;
}

/** A photo as the GUI sends it: a JPEG about 256 px on its long side. */
function frame(input: string | Buffer): Promise<Buffer> {
  return sharp(input).resize(256, 256, { fit: 'inside' }).jpeg({ quality: 80 }).toBuffer();
}

const photo = (name: string): string => join(PEOPLE, name);

async function assertProblem(response: Response, status: number, code: string): Promise<void> {
  assert.equal(response.status, status);
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(((await response.json()) as { code: string }).code, code);
}

test('framing advice on fixture photos as the camera would send them', { skip: noFixtures, timeout: 120_000 }, async (t) => {
  const ta = await startTestAppliance(t);
  const s = await signIn(ta);

  // The generated model stands head to thighs with room above the head: ready for the photo.
  const good = await advise(ta, s, await frame(photo('generated_model_1.png')));
  assert.equal(good.advice, 'ok');
  assert.ok(good.box && good.box.y > 0.03 && good.box.x > 0.15 && good.box.x + good.box.width < 0.85, JSON.stringify(good.box));

  // The VITON photos' hair touches the top edge, and the Dress Code full-body photos cut the head off: step back.
  assert.equal((await advise(ta, s, await frame(photo('viton_00034_00.jpg')))).advice, 'step-back');
  assert.equal((await advise(ta, s, await frame(photo('dresscode_049447_0.jpg')))).advice, 'step-back');

  // Cropped to the face and neck: step back.
  const face = await sharp(photo('viton_00034_00.jpg')).extract({ left: 200, top: 0, width: 368, height: 420 }).toBuffer();
  assert.equal((await advise(ta, s, await frame(face))).advice, 'step-back');

  // The same person with room to spare on one side. The frame is the camera's own view, so a body
  // on its left stands to the person's right: they should move to their left.
  const person = await sharp(photo('generated_model_1.png')).resize(192, 256).toBuffer();
  const onLeft = await sharp(person).extend({ right: 160, background: BACKGROUND }).jpeg().toBuffer();
  const onRight = await sharp(person).extend({ left: 160, background: BACKGROUND }).jpeg().toBuffer();
  assert.equal((await advise(ta, s, onLeft)).advice, 'move-left');
  assert.equal((await advise(ta, s, onRight)).advice, 'move-right');

  // Far away: a small figure in the middle of a large frame.
  const far = await sharp(await sharp(photo('generated_model_1.png')).resize(48, 64).toBuffer())
    .extend({ left: 104, right: 104, top: 96, bottom: 96, background: BACKGROUND })
    .jpeg()
    .toBuffer();
  assert.equal((await advise(ta, s, far)).advice, 'come-closer');

  // Two people side by side.
  const other = await sharp(photo('viton_00055_00.jpg')).resize(192, 256).toBuffer();
  const two = await sharp(person)
    .extend({ right: 192, background: BACKGROUND })
    .composite([{ input: other, left: 192, top: 0 }])
    .jpeg()
    .toBuffer();
  const several = await advise(ta, s, two);
  assert.deepEqual(several, { advice: 'several-people', message: FRAMING_MESSAGES['several-people'] });

  // No one.
  const blank = await sharp({ create: { width: 192, height: 256, channels: 3, background: BACKGROUND } })
    .jpeg()
    .toBuffer();
  assert.deepEqual(await advise(ta, s, blank), { advice: 'no-person', message: FRAMING_MESSAGES['no-person'] });
});

test('framing refusals are problem+json: no session, no CSRF token, too big, not a JPEG', { timeout: 60_000 }, async (t) => {
  const ta = await startTestAppliance(t);
  const s = await signIn(ta);
  const small = await sharp({ create: { width: 96, height: 128, channels: 3, background: BACKGROUND } })
    .jpeg()
    .toBuffer();

  await assertProblem(await post(ta, small, {}), 401, 'unauthorized');
  await assertProblem(await post(ta, small, { cookie: s.cookie }), 403, 'forbidden');
  await assertProblem(
    await post(ta, small, { cookie: s.cookie, 'x-csrf-token': s.csrf, origin: 'https://elsewhere.example' }),
    403,
    'forbidden',
  );

  const auth = { cookie: s.cookie, 'x-csrf-token': s.csrf };
  await assertProblem(await post(ta, Buffer.alloc(FRAMING_MAX_BYTES + 1), auth), 413, 'payload_too_large');
  await assertProblem(await post(ta, small, { ...auth, 'content-type': 'image/png' }), 415, 'unsupported_media_type');
  await assertProblem(await post(ta, Buffer.from('not a picture'), auth), 422, 'invalid_image');
  const huge = await sharp({ create: { width: 3000, height: 3000, channels: 3, background: BACKGROUND } })
    .jpeg({ quality: 10 })
    .toBuffer();
  assert.ok(huge.length < FRAMING_MAX_BYTES, 'a flat 3000×3000 JPEG is small in bytes');
  await assertProblem(await post(ta, huge, auth), 422, 'invalid_image');

  // An admin key works as for every GUI route; a standard key does not.
  const keyed = await post(ta, small, { authorization: `Bearer ${ta.adminKey}` });
  assert.equal(keyed.status, 200, await keyed.clone().text());
  assert.equal(((await keyed.json()) as FramingAdvice).advice, 'no-person');
});
