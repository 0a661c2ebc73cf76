/**
 * The whole person analysis on real photos, against MediaPipe's own answers
 * (test/goldens/): landmarks within 2 % of the image height (median) and a
 * matte whose IoU with MediaPipe's masks is above 0.95, for every fixture
 * person; typed refusals for no person and for two people; the second pass
 * rescuing a poor crop; a layout that puts the face, torso and hands where
 * the landmarks are. Without ../shared only the generated-image cases run.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { PersonAnalyzer, readRawImage } from '../../server/vision/person.ts';
import { landmarksInRoi, landmarksRoi } from '../../server/vision/pose-landmarks.ts';
import { OrtSession } from '../../server/onnx/ort.ts';
import { visionModelPath } from '../../server/vision/models.ts';
import { POSE, REGION, VisionError, type PersonAnalysis } from '../../server/vision/types.ts';
import { decodeGrid, downsampleMask, GOLDEN_TOLERANCES, loadGoldens, maskIoU, medianLandmarkDistance } from '../goldens/golden-format.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const HAVE_FIXTURES = existsSync(join(FIXTURES, 'people'));
const goldens = loadGoldens();

let analyzer: PersonAnalyzer;
before(async () => {
  analyzer = await PersonAnalyzer.create({ threads: 1 });
});
after(async () => {
  await analyzer.dispose();
});

const refusal = (code: string) => (error: unknown) => error instanceof VisionError && error.code === code;

describe('on every fixture person, against MediaPipe', { skip: HAVE_FIXTURES ? false : 'no ../shared/fixtures' }, () => {
  const results = new Map<string, PersonAnalysis>();

  for (const [name, golden] of goldens) {
    test(`${name}: landmarks within 2 % of the height, matte IoU above 0.95`, async () => {
      const image = await readRawImage(join(FIXTURES, golden.image.file));
      const analysis = await analyzer.analyze(image);
      results.set(name, analysis);
      assert.equal(analysis.landmarks.length, 33);
      assert.deepEqual([analysis.matte.width, analysis.matte.height], [image.width, image.height]);

      const distance = medianLandmarkDistance(analysis.landmarks, golden.pose.full.landmarks!, image.height);
      assert.ok(
        distance < GOLDEN_TOLERANCES.landmarkMedianOfHeight,
        `median landmark distance ${(distance * 100).toFixed(2)} % of the height`,
      );
      const grid = downsampleMask(analysis.matte.data, image.width, image.height);
      const iouPose = maskIoU(grid, decodeGrid(golden.pose.full.segmentation!.grid));
      const iouSelfie = maskIoU(grid, decodeGrid(golden.selfie.mask.grid));
      assert.ok(iouPose > GOLDEN_TOLERANCES.maskIoU, `IoU with Pose's mask ${iouPose.toFixed(3)}`);
      assert.ok(iouSelfie > GOLDEN_TOLERANCES.maskIoU, `IoU with the selfie mask ${iouSelfie.toFixed(3)}`);

      // Shoulders and hips are seen; the visibility MediaPipe gives them is high.
      for (const k of [POSE.leftShoulder, POSE.rightShoulder, POSE.leftHip, POSE.rightHip]) {
        assert.ok(analysis.landmarks[k]!.visibility > 0.9, `visibility of landmark ${k}`);
      }
    });
  }

  test('the layout puts the face in the head, the chest in the torso and the shoulders’ hinge in the arms', () => {
    assert.equal(results.size, goldens.size, 'runs after the per-photo tests');
    for (const [name, a] of results) {
      const label = (x: number, y: number): number => a.layout.labels[Math.round(y) * a.width + Math.round(x)]!;
      const lm = a.landmarks;
      const between = (p: number, q: number, t: number) => ({
        x: lm[p]!.x + (lm[q]!.x - lm[p]!.x) * t,
        y: lm[p]!.y + (lm[q]!.y - lm[p]!.y) * t,
      });
      const nose = lm[POSE.nose]!;
      if (nose.y > 0) assert.equal(label(nose.x, nose.y), REGION.head, `${name}: nose`);
      const chest = between(POSE.leftShoulder, POSE.rightHip, 0.45);
      assert.equal(label(chest.x, chest.y), REGION.torso, `${name}: chest`);
      const leftArm = between(POSE.leftShoulder, POSE.leftElbow, 0.6);
      const rightArm = between(POSE.rightShoulder, POSE.rightElbow, 0.6);
      assert.equal(label(leftArm.x, leftArm.y), REGION.leftUpperArm, `${name}: left upper arm`);
      assert.equal(label(rightArm.x, rightArm.y), REGION.rightUpperArm, `${name}: right upper arm`);
      // Every labelled pixel is inside the matte, and the corners of these studio photos are background.
      let outside = 0;
      for (let i = 0; i < a.layout.labels.length; i++) if (a.layout.labels[i] && a.matte.data[i]! < 128) outside++;
      assert.equal(outside, 0, `${name}: labels outside the matte`);
      assert.equal(a.layout.labels[0], REGION.background, `${name}: top-left corner`);
    }
  });

  test('two people side by side are refused with multiple_people', async () => {
    const half = async (file: string) =>
      sharp(join(FIXTURES, 'people', file))
        .resize(384, 512)
        .toBuffer();
    const pair = await sharp({ create: { width: 768, height: 512, channels: 3, background: '#ffffff' } })
      .composite([
        { input: await half('viton_00034_00.jpg'), left: 0, top: 0 },
        { input: await half('dresscode_052767_0.jpg'), left: 384, top: 0 },
      ])
      .png()
      .toBuffer();
    await assert.rejects(analyzer.analyze(await readRawImage(pair)), refusal('multiple_people'));
  });

  test('a garment photo without a person is refused with no_person_detected', async () => {
    const garment = await readRawImage(join(FIXTURES, 'garments', 'upper_viton_00055_00.jpg'));
    await assert.rejects(analyzer.analyze(garment), refusal('no_person_detected'));
  });

  test('from a poor crop, the second pass lands closer to MediaPipe than the first', async () => {
    const golden = goldens.get('viton_00034_00')!;
    const image = await readRawImage(join(FIXTURES, golden.image.file));
    const good = await analyzer.analyze(image);
    // Shift the crop up and right, shrink and turn it: the kind of crop a bad detection gives.
    const poor = {
      ...good.roi,
      cx: good.roi.cx + 0.1 * good.roi.width,
      cy: good.roi.cy - 0.12 * good.roi.width,
      width: good.roi.width * 0.75,
      height: good.roi.height * 0.75,
      rotation: 0.3,
    };
    const session = await OrtSession.create(await visionModelPath('pose_landmark_full'), { threads: 1 });
    try {
      const first = await landmarksInRoi(session, image, poor);
      const second = await landmarksInRoi(session, image, landmarksRoi(first));
      const reference = golden.pose.full.landmarks!;
      const maxError = (a: typeof first.landmarks) =>
        Math.max(...a.map((p, k) => Math.hypot(p.x - reference[k]!.x, p.y - reference[k]!.y)));
      assert.ok(
        maxError(second.landmarks) < 0.5 * maxError(first.landmarks),
        `worst landmark ${maxError(first.landmarks).toFixed(0)} px → ${maxError(second.landmarks).toFixed(0)} px`,
      );
    } finally {
      await session.release();
    }
  });
});

describe('without a person', () => {
  test('noise and a plain wall are refused with no_person_detected', async () => {
    const noise = await sharp({
      create: { width: 600, height: 800, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 50 } },
    })
      .png()
      .toBuffer();
    const wall = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#d8d0c0' } })
      .png()
      .toBuffer();
    await assert.rejects(analyzer.analyze(await readRawImage(noise)), refusal('no_person_detected'));
    await assert.rejects(analyzer.analyze(await readRawImage(wall)), refusal('no_person_detected'));
  });
});
