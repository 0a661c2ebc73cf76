/**
 * The warp engine through the HTTP API, as a shop would use it: listed ready
 * on the CPU; a fixture person and garment give a complete try-on within
 * the default wait bound, at the photo's own size, with the face, hands and
 * far background byte for byte the photo's and the torso in the garment's
 * colours; a top and trousers together; and typed failures (with the credit
 * released) for a photo without a person and for a garment photo with
 * nothing to cut out. Skipped without ../shared's photos.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { isSkin, skinModel } from '../../server/engines/warp/composite/colour.ts';
import { chinRow } from '../../server/engines/warp/composite/neckline.ts';
import { PersonAnalyzer, readRawImage } from '../../server/vision/person.ts';
import { REGION } from '../../server/vision/types.ts';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance.ts';

const ENGINE = resolve(import.meta.dirname, '../../server/engines/warp/engine.ts');
const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const PERSON = join(FIXTURES, 'people', 'generated_model_1.png');
const TOP = join(FIXTURES, 'garments', 'upper_viton_00055_00.jpg');
const TROUSERS = join(FIXTURES, 'garments', 'lower_dresscode_051412_1.jpg');
const HAVE_PHOTOS = [PERSON, TOP, TROUSERS].every((file) => existsSync(file));

const b64 = (file: string): string => readFileSync(file).toString('base64');

interface Status {
  genId: string;
  status: string;
  error?: { code: string; message: string };
}

describe('the warp engine through the API', { skip: HAVE_PHOTOS ? false : 'no ../shared/fixtures photos' }, () => {
  let app: TestAppliance;
  let analyzer: PersonAnalyzer;
  before(async () => {
    analyzer = await PersonAnalyzer.create();
  });
  after(async () => {
    await analyzer.dispose();
  });

  async function tryOn(body: Record<string, unknown>): Promise<{ status: Status; stored: string }> {
    const submitted = await app.call('POST', '/api/v1/try-on', { body: { outputFormat: 'png', ...body } });
    assert.equal(submitted.status, 202, await submitted.clone().text());
    const { genId } = (await submitted.json()) as { genId: string };
    // The default wait bound (30 s): a CPU try-on must be done within it.
    const status = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=true`)).json()) as Status;
    const folder = join(app.dataDir, 'images', genId);
    return { status, stored: join(folder, readdirSync(folder).find((name) => name.startsWith('selfie.')) ?? 'missing') };
  }

  test('listed ready on the CPU', async (t) => {
    app = await startTestAppliance(t, { engines: [{ module: ENGINE }] });
    type Listed = { id: string; ready: boolean; device: string };
    const body = (await (await app.call('GET', '/api/v1/engines')).json()) as { engines?: Listed[] } | Listed[];
    const warp = (Array.isArray(body) ? body : (body.engines ?? [])).find((e) => e.id === 'warp');
    assert.equal(warp?.ready, true);
    assert.equal(warp?.device, 'cpu');
  });

  test('a top on a person: complete within the default wait, the face, hands and background untouched, the torso in the garment’s colour', async (t) => {
    app = await startTestAppliance(t, { engines: [{ module: ENGINE }] });
    const { status, stored } = await tryOn({ selfie: b64(PERSON), items: [b64(TOP)], size: 'M', categories: ['top'] });
    assert.equal(status.status, 'complete', JSON.stringify(status));
    const png = Buffer.from(await (await app.call('GET', `/api/v1/try-on/${status.genId}/image`)).arrayBuffer());
    const result = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const original = await readRawImage(stored);
    assert.deepEqual([result.info.width, result.info.height], [original.width, original.height]);
    const person = await analyzer.analyze(original);
    const skin = skinModel(original, person)!;
    const chin = chinRow(person);
    const counts = { face: 0, faceSame: 0, skin: 0, skinSame: 0, torso: 0, torsoLilac: 0 };
    const { width } = original;
    const skinColoured = (i: number): boolean => isSkin(skin, original.data[3 * i]!, original.data[3 * i + 1]!, original.data[3 * i + 2]!);
    // Bare skin is skin over an area: at least 0.6 of the pixels within 2 skin-coloured (the engine's rule).
    const bare = (i: number): boolean => {
      let n = 0;
      for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) if (skinColoured(i + dy * width + dx)) n++;
      return skinColoured(i) && n >= 0.6 * 25;
    };
    person.layout.labels.forEach((label, i) => {
      const same = [0, 1, 2].every((c) => result.data[3 * i + c] === original.data[3 * i + c]);
      // A hand's region also holds what lies beside the hand (the jeans by the wrist), which the tee may cover, and
      // the head's region below the chin the old top's neckline and strands of hair; the hand itself, its
      // skin-coloured pixels, and the neck's bare skin keep their bytes (their edges are smoothed as bare skin's
      // are: a pixel at a sharp corner may go under the tee), and the whole head above the chin keeps them all.
      const bareHand = (label === REGION.leftHand || label === REGION.rightHand) && skinColoured(i);
      if (label === REGION.head && Math.floor(i / width) <= chin) {
        counts.face++;
        if (same) counts.faceSame++;
      } else if (bareHand || (label === REGION.head && bare(i))) {
        counts.skin++;
        if (same) counts.skinSame++;
      } else if (label === REGION.torso) {
        counts.torso++;
        const [r, g, b] = [result.data[3 * i]!, result.data[3 * i + 1]!, result.data[3 * i + 2]!];
        // The VITON tee is lilac (blue and red above green) or its dark purple print and sleeves.
        if (b > g + 15 && r > g) counts.torsoLilac++;
      }
    });
    assert.ok(counts.face > 10_000 && counts.faceSame === counts.face, `face untouched: ${counts.faceSame}/${counts.face}`);
    assert.ok(counts.skin > 1_000 && counts.skinSame >= 0.999 * counts.skin, `hands and neck untouched: ${counts.skinSame}/${counts.skin}`);
    assert.ok(counts.torsoLilac > 0.8 * counts.torso, `torso in the tee's colours: ${counts.torsoLilac}/${counts.torso}`);
    assert.ok(
      [0, 1, 2].every((c) => result.data[c] === original.data[c]),
      'the top-left corner (background) is untouched',
    );
  });

  test('a top and trousers together', async (t) => {
    app = await startTestAppliance(t, { engines: [{ module: ENGINE }] });
    const { status } = await tryOn({
      selfie: b64(PERSON),
      items: [b64(TROUSERS), b64(TOP)],
      size: 'M',
      categories: ['auto', 'auto'],
      styling: ['untucked'],
    });
    assert.equal(status.status, 'complete', JSON.stringify(status));
  });

  test('no person in the customer photo: failed with no_person_detected, the credit released', async (t) => {
    app = await startTestAppliance(t, { engines: [{ module: ENGINE }] });
    const before = (await (await app.call('GET', '/api/v1/account')).json()) as { creditsRemaining: number };
    const { status } = await tryOn({ selfie: b64(TOP), items: [b64(TOP)], size: 'M' });
    assert.equal(status.status, 'failed');
    assert.equal(status.error?.code, 'no_person_detected');
    const after = (await (await app.call('GET', '/api/v1/account')).json()) as { creditsRemaining: number };
    assert.equal(after.creditsRemaining, before.creditsRemaining);
  });

  test('nothing to cut out of the garment photo: failed with garment_not_detected', async (t) => {
    app = await startTestAppliance(t, { engines: [{ module: ENGINE }] });
    const blank = await sharp({ create: { width: 600, height: 800, channels: 3, background: '#f4f4f4' } })
      .jpeg()
      .toBuffer();
    const { status } = await tryOn({ selfie: b64(PERSON), items: [blank.toString('base64')], size: 'M' });
    assert.equal(status.status, 'failed');
    assert.equal(status.error?.code, 'garment_not_detected');
  });
});
