/**
 * A cami on a customer in a long-sleeved shirt, through the warp engine (in process): the shirt would show on the
 * chest and shoulders, and painting them as skin looked worse than refusing, so the cami is drawn worn over the
 * shirt, whose sleeves keep their bytes. Skipped without ../shared's wide photos.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { EngineRequest } from '../../server/engines/types.ts';
import { PersonAnalyzer, readRawImage } from '../../server/vision/person.ts';
import { POSE } from '../../server/vision/types.ts';
import { warpEngineForSuite } from '../helpers/warp-engine.ts';

const WIDE = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'wide');
const PERSON = join(WIDE, 'people', 'omnitry_person_tie.jpg');
const CAMI = join(WIDE, 'garments', 'ootd_garment_048769_1.jpg');
const HAVE_PHOTOS = [PERSON, CAMI].every((file) => existsSync(file));

describe('a strappy top over a long-sleeved shirt', { skip: HAVE_PHOTOS ? false : 'no ../shared/fixtures/wide photos' }, () => {
  const { engine, work } = warpEngineForSuite('fittingroom-layered-test-');

  test('is drawn worn over the shirt: the shirt’s sleeves keep their bytes, the chest is the cami’s', async () => {
    const photo = await readRawImage(PERSON);
    const request: EngineRequest = {
      genId: 'layered',
      selfie: { path: PERSON, format: 'jpeg', width: photo.width, height: photo.height },
      items: [{ path: CAMI, format: 'jpeg', width: 1000, height: 1000 }],
      categories: ['top'],
      size: 'M',
      personSize: 'M',
      fit: 'regular',
      styling: [],
      outputFormat: 'png',
      workDir: work,
    };
    const result = await engine.run(request, { signal: new AbortController().signal, onProgress: () => {} });
    const stages = (result.stages ?? []).map((s) => s.name);
    assert.ok(
      stages.includes('place and check, worn over the top'),
      `drawn over the top after the checks refused it replacing the shirt: ${stages.join(', ')}`,
    );
    const out = await readRawImage(result.image);
    assert.deepEqual([out.width, out.height], [photo.width, photo.height]);
    // Where the shoulders, elbows and hips are, from the person analysis of the same photo.
    const analyzer = await PersonAnalyzer.create({ threads: 1 });
    const person = await analyzer.analyze(photo);
    await analyzer.dispose();
    const at = (k: number) => person.landmarks[k]!;
    const same = (x: number, y: number): boolean => {
      const i = (Math.round(y) * photo.width + Math.round(x)) * 3;
      const j = (Math.round(y) * out.width + Math.round(x)) * out.channels;
      return [0, 1, 2].every((c) => photo.data[i + c] === out.data[j + c]);
    };
    // Halfway down each upper arm: the shirt's sleeve, unchanged (painted as an arm, it would not be).
    for (const [shoulder, elbow] of [
      [POSE.leftShoulder, POSE.leftElbow],
      [POSE.rightShoulder, POSE.rightElbow],
    ] as const) {
      const x = (at(shoulder).x + at(elbow).x) / 2;
      const y = (at(shoulder).y + at(elbow).y) / 2;
      assert.ok(same(x, y), `the sleeve at (${x.toFixed(0)}, ${y.toFixed(0)}) keeps its bytes`);
    }
    // Two thirds of the way from the shoulders' middle to the hips': the cami, not the white shirt.
    const cx = (at(POSE.leftShoulder).x + at(POSE.rightShoulder).x + 2 * (at(POSE.leftHip).x + at(POSE.rightHip).x)) / 6;
    const cy = (at(POSE.leftShoulder).y + at(POSE.rightShoulder).y + 2 * (at(POSE.leftHip).y + at(POSE.rightHip).y)) / 6;
    assert.ok(!same(cx, cy), `the torso at (${cx.toFixed(0)}, ${cy.toFixed(0)}) is the cami's`);
  });
});
