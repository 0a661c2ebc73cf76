/**
 * Garments without sleeves, or with short ones, on customers whose own tops have longer sleeves, through the warp
 * engine (in process): a cami on a long-sleeved shirt, a pinafore on a long-sleeved cardigan, a short-sleeved shirt on a
 * long-sleeved tee. Each is drawn worn over the customer's sleeves at the first try, which keep their bytes where the
 * new garment does not cover them (painted as bare arms, sleeves were flat blocks of skin; a cami replacing the shirt
 * showed it on the chest and shoulders). Skipped without ../shared's wide photos.
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
const SHIRT = join(WIDE, 'people', 'omnitry_person_tie.jpg');
const CAMI = join(WIDE, 'garments', 'ootd_garment_048769_1.jpg');
const CARDIGAN = join(WIDE, 'people', 'fitdit_model_0179.jpg');
const PINAFORE = join(WIDE, 'garments', 'kolors_cloth_04_dress.png');
const STRIPES = join(WIDE, 'people', 'omnitry_person_top_cloth.jpg');
const HAWAIIAN = join(WIDE, 'garments', 'fitdit_garment_0012.jpg');
const HAVE_PHOTOS = [SHIRT, CAMI, CARDIGAN, PINAFORE, STRIPES, HAWAIIAN].every((file) => existsSync(file));

describe('garments over the sleeves of the customer’s own top', { skip: HAVE_PHOTOS ? false : 'no ../shared/fixtures/wide photos' }, () => {
  const { engine, work } = warpEngineForSuite('fittingroom-layered-test-');

  /** The try-on drawn over the customer's sleeves at the first try: the sleeves keep their bytes, the torso is the garment's. */
  const wornOver = async (
    personFile: string,
    garmentFile: string,
    category: 'top' | 'dress',
    on: 'upper' | 'fore' = 'upper',
  ): Promise<void> => {
    const photo = await readRawImage(personFile);
    const garment = await readRawImage(garmentFile);
    const request: EngineRequest = {
      genId: 'layered',
      selfie: { path: personFile, format: 'jpeg', width: photo.width, height: photo.height },
      items: [{ path: garmentFile, format: garmentFile.endsWith('.png') ? 'png' : 'jpeg', width: garment.width, height: garment.height }],
      categories: [category],
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
      stages.includes('place and check') && !stages.some((name) => name.startsWith('place and check, ')),
      `drawn over the top at the first try: ${stages.join(', ')}`,
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
    // Halfway down each upper arm (or forearm, below a short sleeve): the old sleeve, unchanged (painted as an arm, it
    // would not be).
    for (const [shoulder, elbow] of (on === 'upper'
      ? [
          [POSE.leftShoulder, POSE.leftElbow],
          [POSE.rightShoulder, POSE.rightElbow],
        ]
      : [
          [POSE.leftElbow, POSE.leftWrist],
          [POSE.rightElbow, POSE.rightWrist],
        ]) as [number, number][]) {
      const x = (at(shoulder).x + at(elbow).x) / 2;
      const y = (at(shoulder).y + at(elbow).y) / 2;
      assert.ok(same(x, y), `the sleeve at (${x.toFixed(0)}, ${y.toFixed(0)}) keeps its bytes`);
    }
    // Two thirds of the way from the shoulders' middle to the hips': the new garment, not the old top.
    const cx = (at(POSE.leftShoulder).x + at(POSE.rightShoulder).x + 2 * (at(POSE.leftHip).x + at(POSE.rightHip).x)) / 6;
    const cy = (at(POSE.leftShoulder).y + at(POSE.rightShoulder).y + 2 * (at(POSE.leftHip).y + at(POSE.rightHip).y)) / 6;
    assert.ok(!same(cx, cy), `the torso at (${cx.toFixed(0)}, ${cy.toFixed(0)}) is the new garment's`);
  };

  test('a cami over a long-sleeved shirt (replacing it, the shirt showed on the chest and shoulders)', () => wornOver(SHIRT, CAMI, 'top'));
  test('a pinafore over a long-sleeved cardigan (replacing it, the arms were painted as flat skin)', () =>
    wornOver(CARDIGAN, PINAFORE, 'dress'));
  test('a short-sleeved shirt over a long-sleeved tee, whose sleeves stay on the forearms (painted, they were flat skin)', () =>
    wornOver(STRIPES, HAWAIIAN, 'top', 'fore'));
});
