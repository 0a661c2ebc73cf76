/**
 * The FASHN engine's worn garment image keeps the garment and nothing else, as the reference keeps only its
 * parser's clothing labels: on models in tops with bare arms, the face, neck, hands, trousers and background are
 * grey 127 and the top keeps its own pixels, in one piece.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { greyOutsideGarment, solidGarment, wornCategory } from '../../server/engines/fashn/garment.ts';
import { findWearer } from '../../server/engines/person.ts';
import { wornGarmentMask } from '../../server/engines/warp/cutout/index.ts';
import { PersonAnalyzer, readRawImage } from '../../server/vision/person.ts';
import { POSE, REGION } from '../../server/vision/types.ts';
import { components } from '../../server/kernel/raster.ts';

const PEOPLE = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'people');
/** Models in tops with bare arms: sleeveless over black trousers, a tee over jeans, a black tee. */
const MODELS = ['viton_00034_00.jpg', 'viton_00055_00.jpg', 'viton_00121_00.jpg'];

for (const name of MODELS) {
  test(
    `a worn top keeps only the top, in one piece: face, neck, hands and trousers go grey (${name})`,
    { skip: existsSync(PEOPLE) ? false : 'needs ../shared/fixtures' },
    async () => {
      const analyzer = await PersonAnalyzer.create();
      const photo = await readRawImage(join(PEOPLE, name));
      const wearer = await findWearer(analyzer, photo);
      assert.ok(wearer, 'the model is found');
      const garment = solidGarment(wornGarmentMask(photo, wearer, wornCategory('tops')).mask, 3);
      const grey = greyOutsideGarment(photo.data, garment);
      const isGrey = (i: number): boolean => grey[3 * i] === 127 && grey[3 * i + 1] === 127 && grey[3 * i + 2] === 127;

      /** The share of a region's person pixels (above a row, if given) that are kept. */
      const keptIn = (regions: number[], aboveY = photo.height): number => {
        let inRegion = 0;
        let kept = 0;
        for (let i = 0; i < wearer.layout.labels.length; i++) {
          if (!regions.includes(wearer.layout.labels[i]!) || wearer.matte.data[i]! < 128 || i / photo.width >= aboveY) continue;
          inRegion++;
          if (!isGrey(i)) kept++;
        }
        return kept / Math.max(1, inRegion);
      };
      assert.equal(keptIn([REGION.head, REGION.neck]), 0, 'nothing of the head or neck');
      assert.equal(keptIn([REGION.leftHand, REGION.rightHand]), 0, 'nothing of the hands');
      const legs = [REGION.hips, REGION.leftUpperLeg, REGION.rightUpperLeg, REGION.leftLowerLeg, REGION.rightLowerLeg];
      assert.equal(keptIn(legs.slice(1)), 0, 'nothing of the trousers');
      // The chest, above where a top may end and the trousers' waistband begin.
      const shoulderY = (wearer.landmarks[POSE.leftShoulder]!.y + wearer.landmarks[POSE.rightShoulder]!.y) / 2;
      const hipY = (wearer.landmarks[POSE.leftHip]!.y + wearer.landmarks[POSE.rightHip]!.y) / 2;
      const chest = keptIn([REGION.torso], shoulderY + 0.6 * (hipY - shoulderY));
      assert.ok(chest > 0.9, `the top is kept (${(100 * chest).toFixed(1)} % of the chest)`);
      assert.equal(components(garment.data, garment.width, 255).sizes.length, 1, 'one piece, no strays');
      for (let i = 0; i < wearer.matte.data.length; i++) {
        if (wearer.matte.data[i]! < 128) assert.ok(isGrey(i), `background pixel ${i} is grey`);
      }
    },
  );
}

test('greyOutsideGarment keeps exactly the pixels whose mask is at least 128', () => {
  const rgb = Uint8Array.from([10, 20, 30, 40, 50, 60, 70, 80, 90]);
  const out = greyOutsideGarment(rgb, { data: Uint8Array.from([255, 127, 128]), width: 3, height: 1 });
  assert.deepEqual([...out], [10, 20, 30, 127, 127, 127, 70, 80, 90]);
  assert.deepEqual([...rgb], [10, 20, 30, 40, 50, 60, 70, 80, 90], 'the photo itself is unchanged');
});
