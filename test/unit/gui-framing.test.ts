/**
 * The camera's framing advice: the rules on drawn landmark sets (a person
 * standing in a 300×400 frame, moved, scaled or partly out of view), and the
 * framing guide's lifecycle (one lazy load, one frame at a time, release on
 * dispose) around an analyzer double.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import sharp from 'sharp';
import { ApiError } from '../../server/kernel/errors.ts';
import { adviceFor, FRAMING_MESSAGES, FRAMING_RULES, FramingGuide } from '../../server/gui/framing.ts';
import { POSE, VisionError, type Landmark, type PersonAnalysis } from '../../server/vision/types.ts';

const W = 300;
const H = 400;

/** A person facing the camera, normalised: head at the top fifth, hips at 60 %, feet near the bottom. */
const STANDING: Partial<Record<keyof typeof POSE, [number, number]>> = {
  nose: [0.5, 0.2],
  leftEye: [0.52, 0.18],
  rightEye: [0.48, 0.18],
  leftEar: [0.54, 0.19],
  rightEar: [0.46, 0.19],
  leftShoulder: [0.62, 0.32],
  rightShoulder: [0.38, 0.32],
  leftElbow: [0.66, 0.46],
  rightElbow: [0.34, 0.46],
  leftWrist: [0.67, 0.58],
  rightWrist: [0.33, 0.58],
  leftHip: [0.58, 0.6],
  rightHip: [0.42, 0.6],
  leftKnee: [0.57, 0.77],
  rightKnee: [0.43, 0.77],
  leftAnkle: [0.57, 0.93],
  rightAnkle: [0.43, 0.93],
};

interface Pose {
  /** Added to every x (share of the width). */
  dx?: number;
  /** Added to every y (share of the height). */
  dy?: number;
  /** Scale about the frame's centre. */
  scale?: number;
  /** Landmarks the model thinks are out of the frame. */
  absent?: (keyof typeof POSE)[];
}

function person({ dx = 0, dy = 0, scale = 1, absent = [] }: Pose = {}): Landmark[] {
  const landmarks: Landmark[] = Array.from({ length: 33 }, () => ({ x: W / 2, y: H / 2, z: 0, visibility: 0, presence: 0 }));
  for (const [name, [x, y]] of Object.entries(STANDING) as [keyof typeof POSE, [number, number]][]) {
    const presence = absent.includes(name) ? 0.05 : 0.98;
    landmarks[POSE[name]] = {
      x: (0.5 + (x - 0.5) * scale + dx) * W,
      y: (0.5 + (y - 0.5) * scale + dy) * H,
      z: 0,
      visibility: presence,
      presence,
    };
  }
  return landmarks;
}

test('a person standing in the middle with the head and hips well inside is ok', () => {
  const result = adviceFor(person(), W, H);
  assert.equal(result.advice, 'ok');
  assert.equal(result.message, FRAMING_MESSAGES.ok);
  const box = result.box!;
  assert.ok(box.x > 0.3 && box.x + box.width < 0.7, 'the box spans the body');
  assert.ok(box.y > 0.05 && box.y < 0.2, 'the box starts above the nose (the top of the head)');
  assert.ok(box.y + box.height > 0.9 && box.y + box.height <= 1);
});

test('a head cut off at the top, hips below the frame or a body too tall for it means step back', () => {
  assert.equal(adviceFor(person({ dy: -0.17 }), W, H).advice, 'step-back', 'nose at 3 %: the head is cut off');
  assert.equal(adviceFor(person({ dy: 0.38 }), W, H).advice, 'step-back', 'hips at 98 %');
  assert.equal(adviceFor(person({ absent: ['leftHip', 'rightHip'] }), W, H).advice, 'step-back', 'the model sees no hips');
  assert.equal(adviceFor(person({ scale: 2.3 }), W, H).advice, 'step-back', 'head to hips taller than the frame');
  assert.equal(adviceFor(person({ scale: 3 }), W, H).advice, 'step-back', 'shoulders wider than the frame allows');
  assert.equal(adviceFor(person({ dy: -0.17 }), W, H).message, FRAMING_MESSAGES['step-back']);
});

test('a face filling the frame (shoulders and hips far below it) means step back, not move', () => {
  const face = person({ scale: 4, dy: 1.1 });
  assert.equal(adviceFor(face, W, H).advice, 'step-back');
});

test('a small person far away means come closer', () => {
  const far = person({ scale: 0.45 });
  const shoulderWidth = (far[POSE.leftShoulder]!.x - far[POSE.rightShoulder]!.x) / W;
  assert.ok(shoulderWidth < FRAMING_RULES.minShoulderWidth);
  assert.equal(adviceFor(far, W, H).advice, 'come-closer');
  assert.equal(adviceFor(person({ scale: 0.6 }), W, H).advice, 'ok', 'a shoulder width of 14 % is close enough');
});

test('left and right are the person’s own: a body on the camera frame’s left stands to its right and moves to its left', () => {
  assert.equal(adviceFor(person({ dx: -0.2 }), W, H).advice, 'move-left');
  assert.equal(adviceFor(person({ dx: 0.2 }), W, H).advice, 'move-right');
  assert.equal(adviceFor(person({ dx: -0.2 }), W, H).message, 'Move a little to your left.');
  assert.equal(adviceFor(person({ dx: 0.1 }), W, H).advice, 'ok', 'within 15 % of the middle is centred enough');
  assert.equal(adviceFor(person({ dx: -0.1 }), W, H).advice, 'ok');
});

test('a body cut at the side but small enough to fit is told to move, not to step back', () => {
  const cut = person({ dx: -0.45 });
  assert.ok(cut[POSE.rightShoulder]!.x < 0, 'one shoulder is outside the frame');
  assert.equal(adviceFor(cut, W, H).advice, 'move-left');
});

test('missing landmarks mean step back, and the box never leaves 0..1', () => {
  assert.equal(adviceFor([], W, H).advice, 'step-back');
  const result = adviceFor(person({ scale: 3 }), W, H);
  const box = result.box!;
  for (const value of [box.x, box.y, box.x + box.width, box.y + box.height]) assert.ok(value >= 0 && value <= 1, `${value} in 0..1`);
});

async function jpeg(width = 96, height = 128): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer();
}

/** An analyzer double that answers from a script and can be held mid-analysis. */
function analyzerDouble(answer: () => PersonAnalysis) {
  const calls = { created: 0, analysed: 0, disposed: 0 };
  let hold: Promise<void> = Promise.resolve();
  let letGo: () => void = () => undefined;
  return {
    calls,
    holdNext() {
      hold = new Promise((resolve) => (letGo = resolve));
    },
    letGo: () => letGo(),
    create: async () => {
      calls.created += 1;
      return {
        async analyze() {
          calls.analysed += 1;
          await hold;
          return answer();
        },
        async dispose() {
          calls.disposed += 1;
        },
      };
    },
  };
}

function analysis(landmarks: Landmark[]): PersonAnalysis {
  return {
    width: W,
    height: H,
    landmarks,
    score: 0.9,
    roi: { cx: 0, cy: 0, width: 1, height: 1, rotation: 0 },
    matte: { data: new Uint8Array(), width: 0, height: 0 },
    layout: { labels: new Uint8Array(), width: 0, height: 0 },
  };
}

test('the guide loads its analyzer once, on the first frame, and releases it on dispose', async () => {
  const double = analyzerDouble(() => analysis(person()));
  const guide = new FramingGuide({ createAnalyzer: double.create });
  assert.equal(double.calls.created, 0, 'nothing loads before a frame arrives');
  assert.equal((await guide.advise(await jpeg())).advice, 'ok');
  assert.equal((await guide.advise(await jpeg())).advice, 'ok');
  assert.deepEqual(double.calls, { created: 1, analysed: 2, disposed: 0 });
  await guide.dispose();
  assert.equal(double.calls.disposed, 1);
  assert.equal(guide.loaded, false);
  await assert.rejects(guide.advise(await jpeg()), (error: ApiError) => error.code === 'unavailable');
});

test('one frame at a time: a frame that arrives during another is refused with 429, and dispose waits for the one running', async () => {
  const double = analyzerDouble(() => analysis(person({ dx: 0.2 })));
  const guide = new FramingGuide({ createAnalyzer: double.create });
  double.holdNext();
  const first = guide.advise(await jpeg());
  while (double.calls.analysed === 0) await new Promise((resolve) => setImmediate(resolve));
  await assert.rejects(guide.advise(await jpeg()), (error: ApiError) => error.code === 'rate_limited' && error.status === 429);
  const disposed = guide.dispose();
  assert.equal(double.calls.disposed, 0, 'the models stay while a frame is being analysed');
  double.letGo();
  assert.equal((await first).advice, 'move-right');
  await disposed;
  assert.equal(double.calls.disposed, 1);
});

test('no person and several people come from the analyzer’s refusals', async () => {
  let refusal = new VisionError('no_person_detected', 'none');
  const guide = new FramingGuide({
    createAnalyzer: async () => ({
      analyze: async () => {
        throw refusal;
      },
      dispose: async () => undefined,
    }),
  });
  assert.deepEqual(await guide.advise(await jpeg()), { advice: 'no-person', message: FRAMING_MESSAGES['no-person'] });
  refusal = new VisionError('multiple_people', 'two');
  assert.equal((await guide.advise(await jpeg())).advice, 'several-people');
  await guide.dispose();
});

test('a failed model load answers 503 and is tried again with the next frame', async () => {
  let attempts = 0;
  const double = analyzerDouble(() => analysis(person()));
  const guide = new FramingGuide({
    createAnalyzer: async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('model file missing');
      return double.create();
    },
  });
  await assert.rejects(guide.advise(await jpeg()), (error: ApiError) => error.code === 'unavailable' && error.status === 503);
  assert.equal((await guide.advise(await jpeg())).advice, 'ok');
  await guide.dispose();
});

test('frames that are not a JPEG of sensible size are refused as invalid images before any model loads', async () => {
  const double = analyzerDouble(() => analysis(person()));
  const guide = new FramingGuide({ createAnalyzer: double.create });
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#000' } })
    .png()
    .toBuffer();
  for (const frame of [Buffer.from('not an image'), png, await jpeg(16, 16), await jpeg(2000, 100)]) {
    await assert.rejects(guide.advise(frame), (error: ApiError) => error.code === 'invalid_image' && error.status === 422);
  }
  assert.equal(double.calls.created, 0);
  await guide.dispose();
});
