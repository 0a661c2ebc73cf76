/**
 * Face Mesh on real photos (../shared/fixtures/people and wide/people),
 * checked against the pose landmarks of PersonAnalyzer: a face is found
 * exactly on the photos whose eyes and nose are in the frame (heads cropped
 * by the top edge are common in product photos and give null); the pose's
 * nose and eyes lie inside the face oval; the face box lies inside the head
 * region the pose gives; the oval's area is plausible for the head's size.
 * Without ../shared only the no-face case on a generated image runs.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FaceMesh, FACE_LANDMARKS, poseHeadBox } from '../../server/vision/face-mesh.ts';
import { maskArea } from '../../server/vision/face-regions.ts';
import { PersonAnalyzer, readRawImage } from '../../server/vision/person.ts';
import { POSE, type Landmark, type RawImage } from '../../server/vision/types.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const HAVE_FIXTURES = existsSync(join(FIXTURES, 'people')) && existsSync(join(FIXTURES, 'wide', 'people'));

/** The face box may reach this many head-box widths past the pose's head box (landmarks 0..10 span eyes to mouth, ear to ear). */
const HEAD_MARGIN = 0.75;
/** The oval's area against the squared ear-to-ear and shoulder distances (fixture photos: 0.86..1.80 and 0.14..0.29). */
const AREA_PER_EAR2 = [0.6, 2.5] as const;
const AREA_PER_SHOULDER2 = [0.08, 0.45] as const;

function personPhotos(dir: string): string[] {
  if (!existsSync(join(dir, 'manifest.json'))) return [];
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { images: { file: string; kind: string }[] };
  return manifest.images.filter((e) => e.kind === 'person').map((e) => join(dir, e.file));
}

let mesh: FaceMesh;
before(async () => {
  mesh = await FaceMesh.create({ threads: 1 });
});
after(async () => {
  await mesh.dispose();
});

test('a photo without a face gives null', async () => {
  const [width, height] = [320, 480];
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i += 3) data.set([200, 190 - (i % 97), 180], i);
  const image: RawImage = { data, width, height, channels: 3 };
  assert.equal(await mesh.detect(image), null);
  assert.equal(await mesh.detect(image, { x0: 100, y0: 50, x1: 180, y1: 110 }), null);
});

describe('on the fixture person photos, against the pose landmarks', { skip: HAVE_FIXTURES ? false : 'no ../shared/fixtures' }, () => {
  let analyzer: PersonAnalyzer;
  before(async () => {
    analyzer = await PersonAnalyzer.create({ threads: 1 });
  });
  after(async () => {
    await analyzer?.dispose();
  });

  const photos = [...personPhotos(FIXTURES), ...personPhotos(join(FIXTURES, 'wide'))];
  let withFace = 0;
  let withoutFace = 0;
  for (const path of photos) {
    test(basename(path), async () => {
      const image = await readRawImage(path);
      const pose = (await analyzer.analyze(image)).landmarks;
      const inFrame = (p: Landmark): boolean => p.x >= 0 && p.y >= 0 && p.x < image.width && p.y < image.height;
      const visible = [POSE.nose, POSE.leftEye, POSE.rightEye].every((k) => inFrame(pose[k]!));
      const head = poseHeadBox(pose);
      assert.ok(head, 'the pose sees the head');
      const face = await mesh.detect(image, head);
      if (!visible) {
        withoutFace++;
        assert.equal(face, null, 'the eyes are out of the frame: no face');
        return;
      }
      withFace++;
      assert.ok(face, 'a face is found');
      assert.equal(face.landmarks.length, FACE_LANDMARKS);
      assert.deepEqual([face.oval.width, face.oval.height], [image.width, image.height]);

      const oval = (p: Landmark): number => face.oval.data[Math.floor(p.y) * image.width + Math.floor(p.x)]!;
      for (const k of [POSE.nose, POSE.leftEye, POSE.rightEye]) assert.equal(oval(pose[k]!), 255, `pose landmark ${k} inside the oval`);

      const margin = HEAD_MARGIN * (head.x1 - head.x0);
      const { box } = face;
      assert.ok(
        box.x0 >= head.x0 - margin && box.y0 >= head.y0 - margin && box.x1 <= head.x1 + margin && box.y1 <= head.y1 + margin,
        `face box ${JSON.stringify(box)} inside the head region ${JSON.stringify(head)} ± ${margin.toFixed(0)} px`,
      );

      const area = maskArea(face.oval);
      const ears = Math.hypot(pose[POSE.leftEar]!.x - pose[POSE.rightEar]!.x, pose[POSE.leftEar]!.y - pose[POSE.rightEar]!.y);
      const shoulders = Math.hypot(
        pose[POSE.leftShoulder]!.x - pose[POSE.rightShoulder]!.x,
        pose[POSE.leftShoulder]!.y - pose[POSE.rightShoulder]!.y,
      );
      const perEar = area / ears ** 2;
      const perShoulder = area / shoulders ** 2;
      assert.ok(perEar > AREA_PER_EAR2[0] && perEar < AREA_PER_EAR2[1], `oval area / ear distance² = ${perEar.toFixed(2)}`);
      assert.ok(
        perShoulder > AREA_PER_SHOULDER2[0] && perShoulder < AREA_PER_SHOULDER2[1],
        `oval area / shoulder distance² = ${perShoulder.toFixed(3)}`,
      );
      const skin = maskArea(face.skin);
      assert.ok(skin > area * 0.6 && skin < area * 0.95, `skin ${skin} of the oval's ${area} pixels`);
    });
  }

  test('both kinds of photo were seen', () => {
    assert.ok(withFace >= 15, `${withFace} photos with a face`);
    assert.ok(withoutFace >= 3, `${withoutFace} photos with the head cropped`);
  });
});
