/**
 * The warp engine's body side against plain arithmetic and drawn shapes:
 * the thin-plate spline, the size ladder and proportions, placement on a
 * synthetic body (size up is wider and longer, sleeves follow the arms,
 * tucked tops end at the waist), rendering a garment through the spline,
 * and compositing (face and background untouched byte for byte, hands
 * but for a pixel at a sharp corner of their outline, bare arms in front
 * of the garment's body, old sleeves turned to skin).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isSkin, skinModel } from '../../server/engines/warp/composite/colour.ts';
import { CORE_RADIUS2, compose } from '../../server/engines/warp/composite/compose.ts';
import { OUTSIDE, limbPaint } from '../../server/engines/warp/composite/limbs.ts';
import { closeGaps } from '../../server/engines/warp/composite/gaps.ts';
import { replaceWaistBand } from '../../server/engines/warp/composite/bands.ts';
import { bodyFrame, len, mid, sub } from '../../server/engines/warp/fit/body.ts';
import { hemAtWrists, reachShoulders, restOnShoulders, roundCorners } from '../../server/engines/warp/fit/drape.ts';
import { oldBottomsTop, oldTopHem } from '../../server/engines/warp/fit/old-hem.ts';
import { clothedWidth, type ClothedWidth } from '../../server/engines/warp/fit/old-waist.ts';
import { inBand, ownedBy, placeGarment } from '../../server/engines/warp/fit/place.ts';
import { skeletonForward } from '../../server/engines/warp/fit/sleeve.ts';
import { folds, renderGarment, type Layer } from '../../server/engines/warp/fit/render.ts';
import { garmentScale } from '../../server/engines/warp/fit/sizing.ts';
import { sizeStep } from '../../server/kernel/vocabulary.ts';
import { fitThinPlateSpline, mappingGrid } from '../../server/engines/warp/fit/tps.ts';
import type { GarmentCutout, Point } from '../../server/engines/warp/types.ts';
import { HeuristicBodyParser } from '../../server/vision/body-layout.ts';
import { POSE, REGION, type PersonAnalysis, type RawImage } from '../../server/vision/types.ts';
import {
  H,
  OLD_TOP,
  SKIN,
  W,
  WALL,
  darkEdges,
  greyLayer,
  hangingSleeveTop,
  paintPatch,
  syntheticPerson,
  syntheticTee,
} from '../helpers/warp-body.ts';

const distanceTo = (p: number[], q: readonly number[]): number => Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!, p[2]! - q[2]!);
const close = (a: number, b: number, eps: number, what = ''): void => assert.ok(Math.abs(a - b) <= eps, `${what} ${a} vs ${b} (±${eps})`);

describe('thin-plate spline', () => {
  const sources = [
    { x: 0, y: 0 },
    { x: 100, y: 0 },
    { x: 0, y: 100 },
    { x: 100, y: 100 },
    { x: 50, y: 50 },
  ];

  test('it takes every control point to its target exactly', () => {
    const targets = [
      { x: 10, y: 5 },
      { x: 120, y: 0 },
      { x: -5, y: 110 },
      { x: 100, y: 130 },
      { x: 60, y: 40 },
    ];
    const spline = fitThinPlateSpline(sources, targets);
    for (const [k, p] of sources.entries()) {
      const q = spline.map(p.x, p.y);
      close(q.x, targets[k]!.x, 1e-6, `x of point ${k}`);
      close(q.y, targets[k]!.y, 1e-6, `y of point ${k}`);
    }
  });

  test('an affine correspondence is reproduced everywhere (no bending)', () => {
    const affine = (p: Point): Point => ({ x: 2 * p.x - 0.5 * p.y + 7, y: 0.3 * p.x + 1.5 * p.y - 3 });
    const spline = fitThinPlateSpline(sources, sources.map(affine));
    for (const p of [
      { x: 13, y: 77 },
      { x: -40, y: 200 },
      { x: 250, y: -30 },
    ]) {
      const q = spline.map(p.x, p.y);
      const e = affine(p);
      close(q.x, e.x, 1e-6);
      close(q.y, e.y, 1e-6);
    }
  });

  test('the grid holds the spline at every grid node; degenerate points are refused', () => {
    const spline = fitThinPlateSpline(
      sources,
      sources.map((p) => ({ x: p.x + Math.sin(p.y / 30) * 5, y: p.y })),
    );
    const grid = mappingGrid(spline, 10, 20, 30, 17, 4);
    assert.equal(grid.columns, Math.ceil(30 / 4) + 1);
    assert.equal(grid.rows, Math.ceil(17 / 4) + 1);
    const p = spline.map(10 + 2 * 4, 20 + 3 * 4);
    close(grid.x[3 * grid.columns + 2]!, p.x, 1e-3);
    close(grid.y[3 * grid.columns + 2]!, p.y, 1e-3);
    const line = [
      { x: 0, y: 0 },
      { x: 1, y: 1 },
      { x: 2, y: 2 },
    ];
    assert.throws(() => fitThinPlateSpline(line, line), /degenerate/);
  });
});

describe('sizes', () => {
  test('the ladder: letters, 2XL, EU numbers and waists land on the same steps', () => {
    assert.equal(sizeStep('M'), 3);
    assert.equal(sizeStep('xl'), 5);
    assert.equal(sizeStep('2XL'), sizeStep('XXL'));
    assert.equal(sizeStep('38'), sizeStep('M'));
    assert.equal(sizeStep('W32'), sizeStep('M'));
    assert.equal(sizeStep('40')! - sizeStep('38')!, 1);
    // What validation refuses has no step: the engine never sees a size the API did not accept.
    assert.equal(sizeStep('huge'), null);
    assert.equal(sizeStep('37'), null);
    assert.throws(() => garmentScale('huge', 'M', 'regular'), /unknown size/);
  });

  test('one size up is 6 % wider and 3 % longer, one down the reverse; fits multiply; oversized drops the shoulder', () => {
    const same = garmentScale('M', 'M', 'regular');
    assert.deepEqual([same.steps, same.width, same.length], [0, 1, 1]);
    const up = garmentScale('L', 'M', 'regular');
    close(up.width, 1.06, 1e-12);
    close(up.length, 1.03, 1e-12);
    const down = garmentScale('S', 'M', 'regular');
    close(down.width, 0.94, 1e-12);
    close(garmentScale('M', 'M', 'oversized').width, 1.18, 1e-12);
    assert.equal(garmentScale('M', 'M', 'oversized').droppedShoulder, true);
    assert.equal(garmentScale('4XL', 'XXS', 'regular').steps, 4, 'clamped');
  });
});

// A synthetic person: 400×600, facing the camera, arms hanging slightly out, a skin-coloured face and arms,
// a dark old top on the torso and upper arms, a light grey wall.
describe('placing a top on a body', () => {
  const { person } = syntheticPerson();
  const body = bodyFrame(person);
  const tee = syntheticTee();
  const pairsOf = (size: string, fit: 'slim' | 'regular' | 'relaxed' | 'oversized' = 'regular', styling: string[] = [], tucked = false) =>
    new Map(
      placeGarment(tee, body, { scale: garmentScale(size, 'M', fit), styling, tucked }).pieces[0]!.pairs.map(
        (p) => [`${p.from.x},${p.from.y}`, p.to] as const,
      ),
    );
  const target = (pairs: Map<string, Point>, p: Point | undefined): Point => pairs.get(`${p!.x},${p!.y}`)!;

  test('the frame: unit = shoulder width, side towards the wearer’s left, down towards the hips', () => {
    close(body.unit, 100, 1e-9);
    close(body.side.x, 1, 1e-9);
    close(body.down.y, 1, 1e-9);
    const half = body.halfWidth(60);
    assert.ok(half.left > 30 && half.left < 60 && half.right > 30 && half.right < 60, `measured ${JSON.stringify(half)}`);
  });

  test('shoulders land on the shoulders; the wearer’s left on the image right', () => {
    const pairs = pairsOf('M');
    const left = target(pairs, tee.landmarks.leftShoulder);
    const right = target(pairs, tee.landmarks.rightShoulder);
    assert.ok(Math.abs(left.x - 250) < 12 && Math.abs(left.y - 150) < 12, `left shoulder at ${JSON.stringify(left)}`);
    assert.ok(Math.abs(right.x - 150) < 12 && Math.abs(right.y - 150) < 12, `right shoulder at ${JSON.stringify(right)}`);
  });

  test('one size up is wider and longer than true to size, one size down narrower and shorter', () => {
    const width = (pairs: Map<string, Point>): number =>
      len(sub(target(pairs, tee.landmarks.leftArmpit), target(pairs, tee.landmarks.rightArmpit)));
    const hemY = (pairs: Map<string, Point>): number => target(pairs, tee.landmarks.leftHem).y;
    const [small, same, large] = [pairsOf('S'), pairsOf('M'), pairsOf('L')];
    assert.ok(width(small) < width(same) && width(same) < width(large), `${width(small)} < ${width(same)} < ${width(large)}`);
    assert.ok(hemY(small) < hemY(same) && hemY(same) < hemY(large), `${hemY(small)} < ${hemY(same)} < ${hemY(large)}`);
    close(width(large) / width(same), 1.06, 0.01, 'one step wider');
    assert.ok(width(pairsOf('M', 'oversized')) > width(pairsOf('M', 'relaxed')), 'oversized is looser than relaxed');
  });

  test('sleeves run down the arms, each cut from the body and drawn along its arm', () => {
    const placement = placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false });
    assert.equal(placement.pieces.length, 3, 'the body and two sleeves');
    // The wearer's left sleeve is on the cut-out's right, beyond its armhole (150, 22)–(150, 80).
    const sleeve = placement.pieces.find((p) => p.skeleton && ownedBy(p, 175, 60))!;
    assert.ok(sleeve, 'a piece draws the left sleeve');
    assert.ok(!ownedBy(placement.pieces[0]!, 175, 60) && ownedBy(placement.pieces[0]!, 100, 150), 'the body piece draws the body only');
    const end = skeletonForward(sleeve.skeleton!).map(tee.landmarks.leftSleeveEnd!.x, tee.landmarks.leftSleeveEnd!.y);
    // On the left upper arm (from (250,150) to (275,240)): within a few pixels of that line.
    const t = ((end.x - 250) * 25 + (end.y - 150) * 90) / (25 * 25 + 90 * 90);
    const onArm = { x: 250 + 25 * t, y: 150 + 90 * t };
    assert.ok(len(sub(end, onArm)) < 6, `sleeve end ${JSON.stringify(end)} is off the arm`);
    assert.ok(t > 0.2 && t < 1, `a short sleeve ends on the upper arm (t = ${t.toFixed(2)})`);
  });

  test('a dress longer than its wearer ends at the ankles; a top, or a dress that ends above them, keeps its length', () => {
    const dress = { ...tee, category: 'dress' as const };
    const hemY = (garment: typeof tee, floor: number | null): number =>
      placeGarment(garment, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false, floor }).pieces[0]!.pairs.find(
        (p) => p.from === garment.landmarks.leftHem,
      )!.to.y;
    const free = hemY(dress, null);
    // The ankles 60 pixels above where the hem would fall (the shoulders at y 150, the body upright).
    const floor = free - 150 - 60;
    close(hemY(dress, floor), 150 + floor, 1, 'the hem at the ankles');
    close(hemY(tee, floor), hemY(tee, null), 1e-6, 'a top');
    close(hemY(dress, free - 150 + 40), free, 1e-6, 'ankles below the hem');
  });

  test('a strap’s top lies on the shoulder, in from its joint; a sleeved top’s shoulder just outside it', () => {
    const { leftSleeveEnd: _l, rightSleeveEnd: _r, sleeveHalfWidth: _h, ...sleeveless } = tee.landmarks;
    const cami = { ...tee, landmarks: { ...sleeveless, straps: true } };
    const shoulderX = (garment: typeof tee): number =>
      placeGarment(garment, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false }).pieces[0]!.pairs.find(
        (p) => p.from === garment.landmarks.leftShoulder,
      )!.to.x;
    // The left shoulder joint at x 250, the shoulders 100 apart: straps 0.15 of that in, a tee's 0.04 out.
    close(shoulderX(cami), 250 - 15, 1, 'strap');
    close(shoulderX(tee), 250 + 4, 1, 'sleeved');
  });

  test('a sleeve whose end lies on the body’s side of its armhole is not cut from the body: the body stays whole', () => {
    // A dropped shoulder's short sleeve, read with its end (148, 70) just inside the armhole line (150, 22)–(152, 80).
    const dropped = { ...tee, landmarks: { ...tee.landmarks, leftArmpit: { x: 152, y: 80 }, leftSleeveEnd: { x: 148, y: 70 } } };
    const placement = placeGarment(dropped, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false });
    assert.equal(placement.pieces.filter((p) => p.skeleton).length, 0, 'no sleeve drawn along an arm');
    // The wearer's left half of the chest, which a sleeve cut along that line took with it, is drawn.
    assert.ok(placement.pieces.some((p) => !p.skeleton && ownedBy(p, 130, 60)));
    const layer = renderGarment(dropped, placement, W, H);
    let opaque = 0;
    for (const a of layer.alpha) if (a > 0.5) opaque++;
    const whole = renderGarment(
      tee,
      placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false }),
      W,
      H,
    );
    let wholeOpaque = 0;
    for (const a of whole.alpha) if (a > 0.5) wholeOpaque++;
    assert.ok(opaque > 0.85 * wholeOpaque, `${opaque} of ${wholeOpaque} pixels drawn`);
  });

  test('a sleeve a little short of the customer’s own is drawn down to its end; one far shorter keeps its length', () => {
    const endOf = (sleeveEnds: (Point | null)[] | null): { t: number; point: Point } => {
      const placement = placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false, sleeveEnds });
      const sleeve = placement.pieces.find((p) => p.skeleton && ownedBy(p, 175, 60))!;
      const point = skeletonForward(sleeve.skeleton!).map(tee.landmarks.leftSleeveEnd!.x, tee.landmarks.leftSleeveEnd!.y);
      // Along the left upper arm, from (250, 150) to the elbow (275, 240).
      return { t: ((point.x - 250) * 25 + (point.y - 150) * 90) / (25 * 25 + 90 * 90), point };
    };
    const own = endOf(null).t;
    const at = (t: number): Point => ({ x: 250 + 25 * t, y: 150 + 90 * t });
    // The old sleeve ends a fifth further down the arm: the new one reaches it (and a little past, over its cuff).
    const lower = endOf([at(own * 1.2), null]).t;
    assert.ok(lower > own * 1.2 && lower < own * 1.2 + 0.06, `drawn down to ${lower.toFixed(3)}, the old end at ${(own * 1.2).toFixed(3)}`);
    // Twice as far down (an elbow-length sleeve under a cap sleeve): the new sleeve keeps its own length.
    close(endOf([at(own * 2), null]).t, own, 1e-6, 'far shorter');
    // Above its own end: nothing to cover.
    close(endOf([at(own * 0.8), null]).t, own, 1e-6, 'longer already');
  });

  test('with the forearms folded across the body, a sleeve ends at the elbow; with them down it runs on', () => {
    // The tee's sleeves made 1.5 of its shoulders' width long: down the arms, past the elbows.
    const longSleeves = { ...tee, landmarks: { ...tee.landmarks, leftSleeveEnd: { x: 190, y: 167 }, rightSleeveEnd: { x: 10, y: 167 } } };
    const endOf = (folded: boolean): number => {
      const placement = placeGarment(longSleeves, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false, folded });
      const sleeve = placement.pieces.find((p) => p.skeleton && ownedBy(p, 175, 60))!;
      const point = skeletonForward(sleeve.skeleton!).map(190, 167);
      // Along the left upper arm, from (250, 150) to the elbow (275, 240): 1 at the elbow.
      return ((point.x - 250) * 25 + (point.y - 150) * 90) / (25 * 25 + 90 * 90);
    };
    const folded = endOf(true);
    assert.ok(folded > 0.8 && folded <= 1, `folded: the sleeve ends at ${folded.toFixed(3)} of the upper arm`);
    assert.ok(endOf(false) > 1.3, `down: at ${endOf(false).toFixed(3)}`);
  });

  test('a sleeve begins at the shoulder’s top, and its cap beyond the armhole is drawn by the sleeve alone', () => {
    const placement = placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false });
    const sleeves = placement.pieces.filter((p) => p.skeleton);
    // The wearer's left armhole runs (150, 22)–(150, 80): (152, 25) is the sleeve's cap, beyond it and above its middle.
    assert.ok(!ownedBy(placement.pieces[0]!, 152, 25), 'the body does not draw the cap (it stood past the shoulder as a wing)');
    assert.ok(
      sleeves.some((p) => ownedBy(p, 152, 25)),
      'the sleeve draws its cap',
    );
    const layer = renderGarment(tee, { ...placement, pieces: sleeves }, W, H);
    const alphaAt = (x: number, y: number): number => layer.alpha[(y - layer.y0) * layer.width + (x - layer.x0)] ?? 0;
    // The shoulder's top lies 13 pixels above the joint (250, 150); the sleeve covers the arm from just below it.
    const top = body.shoulderTop.left;
    assert.ok(top.y < 145, `the shoulder's top at ${top.y}`);
    for (const x of [245, 250, 255]) assert.ok(alphaAt(x, Math.round(top.y) + 4) > 0.5, `the sleeve covers (${x}, ${top.y + 4})`);
  });

  test('the body stays below the shoulders’ outline, which rises towards the neck where the body’s does', () => {
    const lineAt = (line: readonly Point[], x: number): number => {
      const k = Math.max(0, Math.min(line.length - 2, line.findIndex((p) => p.x >= x) - 1));
      const [a, b] = [line[k]!, line[k + 1]!];
      return a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x || 1);
    };
    const outlineOf = (frame: typeof body): Point[] =>
      placeGarment(tee, frame, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false }).pieces[0]!.below!.line;
    // The drawn person's torso is flat on top (y 140): the outline is the straight line between the shoulders' tops.
    const flat = outlineOf(body);
    const straight = (x: number): number => lineAt([body.shoulderTop.right, body.shoulderTop.left], x);
    for (const x of [160, 170, 230, 240]) close(lineAt(flat, x), straight(x), 0.5, `flat shoulders at x ${x}`);
    // Shoulders rising 12 pixels from the shoulders' tops (x 150, 250) to the neck's sides (x 170, 230).
    const { image, person: sloped } = syntheticPerson();
    for (let x = 150; x <= 250; x++) {
      const rise = Math.round(12 * Math.min(1, Math.max(0, (50 - Math.abs(x - 200)) / 20)));
      for (let y = 140 - rise; y < 140; y++) {
        image.data.set(OLD_TOP, (y * W + x) * 3);
        sloped.matte.data[y * W + x] = 255;
      }
    }
    sloped.layout = new HeuristicBodyParser().parse(image, sloped.landmarks, sloped.matte);
    const slopedFrame = bodyFrame(sloped);
    const line = outlineOf(slopedFrame);
    // Two thirds of the way to the neck's sides (closer in, the drawn layout calls the raised cloth head).
    for (const x of [163, 237])
      assert.ok(lineAt(line, x) < straight(x) - 4, `towards the neck at x ${x}: ${lineAt(line, x)} vs ${straight(x)}`);
    close(lineAt(line, 150), straight(150), 1, 'at the shoulder’s top');
    // Past the shoulders' tops it goes on level with them: a sleeve held out from the body keeps its top.
    for (const x of [110, 130, 270, 290]) close(lineAt(line, x), straight(x), 1, `past the shoulders' tops at x ${x}`);
  });

  test('a garment drawn at a quarter of its size shows a fine knit’s ribs as their mean, not as bands beating against the pixels', () => {
    // 420 × 420 pixels of ribs one pixel tall, white and black in turn, drawn at 100 × 100 (1/4.2).
    const side = 420;
    const data = new Uint8Array(side * side * 4);
    for (let y = 0; y < side; y++)
      for (let x = 0; x < side; x++) data.set(y % 2 ? [0, 0, 0, 255] : [255, 255, 255, 255], (y * side + x) * 4);
    const knit: GarmentCutout = { ...tee, image: { data, width: side, height: side, channels: 4 }, landmarks: {} };
    const corners = [
      { x: 0, y: 0 },
      { x: side, y: 0 },
      { x: 0, y: side },
      { x: side, y: side },
    ];
    const placement = {
      pieces: [{ pairs: corners.map((p) => ({ from: p, to: { x: 50 + p.x / 4.2, y: 50 + p.y / 4.2 } })) }],
      bodyPolygon: null,
    };
    const layer = renderGarment(knit, placement, W, H);
    // Inside the drawn square, away from its edges: every pixel near the ribs' mean grey.
    let worst = 0;
    for (let y = 60; y < 140; y++) {
      for (let x = 60; x < 140; x++)
        worst = Math.max(worst, Math.abs(layer.rgb[((y - layer.y0) * layer.width + x - layer.x0) * 3]! - 127.5));
    }
    assert.ok(worst < 40, `a pixel ${worst.toFixed(0)} levels off the mean grey`);
  });

  test('a piece is cut along the outline it stays below anti-aliased: the row the line crosses is covered by its share below', () => {
    // The tee's solid body (x 50..149, y 20..229 of the cut-out) moved 100 pixels right and down, below a slanting line.
    const corners = [
      { x: 50, y: 20 },
      { x: 150, y: 20 },
      { x: 50, y: 230 },
      { x: 150, y: 230 },
      { x: 100, y: 120 },
    ];
    const line = [
      { x: 100, y: 150.4 },
      { x: 300, y: 170.8 },
    ];
    const placement = {
      pieces: [{ pairs: corners.map((p) => ({ from: p, to: { x: p.x + 100, y: p.y + 100 } })), below: { line } }],
      bodyPolygon: null,
    };
    const layer = renderGarment(tee, placement, W, H);
    const alphaAt = (x: number, y: number): number => layer.alpha[(y - layer.y0) * layer.width + x - layer.x0] ?? 0;
    for (let x = 160; x < 240; x += 7) {
      const y = 150.4 + ((x - 100) * 20.4) / 200;
      const row = Math.floor(y);
      close(alphaAt(x, row), row + 1 - y, 0.05, `column ${x}, row ${row} crossed at ${y.toFixed(2)}`);
      assert.equal(alphaAt(x, row - 1), 0, `column ${x} above the line`);
      close(alphaAt(x, row + 1), 1, 0.01, `column ${x} below the line`);
    }
  });

  test('an open jacket is two halves, each hanging from its own shoulder and parting towards the hem', () => {
    const jacket: GarmentCutout = { ...tee, category: 'outerwear' };
    const closed = placeGarment(jacket, body, { scale: garmentScale('M', 'M', 'regular'), styling: ['closed'], tucked: false });
    const open = placeGarment(jacket, body, { scale: garmentScale('M', 'M', 'regular'), styling: ['open'], tucked: false });
    assert.equal(closed.pieces.filter((p) => !p.skeleton).length, 1, 'closed, one body with its sleeves cut away');
    assert.equal(open.pieces.filter((p) => !p.skeleton).length, 2, 'open, two halves with their sleeves cut away');
    assert.equal(open.pieces.filter((p) => p.skeleton).length, 2, 'each sleeve along its arm');
    const [wearerLeft, wearerRight] = open.pieces;
    // The wearer's left half is the image's right of the centre line, and the other way round.
    assert.deepEqual(wearerLeft!.split, { from: 100, to: Infinity });
    assert.deepEqual(wearerRight!.split, { from: -Infinity, to: 100 });
    // The hem's centre point is on both halves, pulled apart: towards the wearer's left on one, right on the other.
    const hemCentre = (piece: (typeof open.pieces)[number]) => piece.pairs.find((p) => p.from.x === 100 && p.from.y === 229)!.to;
    const closedCentre = closed.pieces[0]!.pairs.find((p) => p.from.x === 100 && p.from.y === 229)!.to;
    assert.ok(
      hemCentre(wearerLeft!).x > closedCentre.x + 5 && hemCentre(wearerRight!).x < closedCentre.x - 5,
      'the front parts at the hem',
    );
    // The neckline parts less than the hem.
    const neck = (piece: (typeof open.pieces)[number]) => piece.pairs.find((p) => p.from.x === 100 && p.from.y === 35)!.to.x;
    assert.ok(neck(wearerLeft!) - neck(wearerRight!) < hemCentre(wearerLeft!).x - hemCentre(wearerRight!).x);
  });

  test('sleeves hanging in the photo, cut from the body at the armpits, meet it above them without a slit', () => {
    const { person: armsIn } = syntheticPerson();
    // The wearer's left arm held close to the body: that sleeve's spline bends away from the body's along the cut.
    armsIn.landmarks[POSE.leftElbow] = { ...armsIn.landmarks[POSE.leftElbow]!, x: 240 };
    armsIn.landmarks[POSE.leftWrist] = { ...armsIn.landmarks[POSE.leftWrist]!, x: 230 };
    // A top whose sleeves hang beside its body (x 4..40 and 160..196) down to y 200.
    const hanging = hangingSleeveTop(40, 160, 36, 70);
    const placement = placeGarment(hanging, bodyFrame(armsIn), { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false });
    assert.equal(placement.pieces.length, 3);
    const layer = renderGarment(hanging, placement, W, H);
    const armpit = placement.pieces[0]!.pairs.find((p) => p.from.x === 160 && p.from.y === 70)!.to;
    let open = 0;
    // From the shoulder joints (above them the neck opening parts the cloth) to just above the armpits.
    const shoulderY = armsIn.landmarks[POSE.leftShoulder]!.y;
    for (let y = shoulderY; y < armpit.y - 20; y++) {
      const row = Array.from(layer.alpha.subarray((y - layer.y0) * layer.width, (y - layer.y0 + 1) * layer.width));
      const first = row.findIndex((a) => a >= 0.5);
      if (first < 0) continue;
      const last = row.length - 1 - [...row].reverse().findIndex((a) => a >= 0.5);
      open += row.slice(first, last + 1).filter((a) => a < 0.5).length;
    }
    assert.equal(open, 0, `${open} pixels open between sleeve and body above the armpits`);
  });

  test('a long sleeve follows an arm bent at the elbow (a hand on the hip), rounding the elbow without a wing', () => {
    const { person: akimbo } = syntheticPerson();
    // The wearer's left elbow held out, the hand back on the hip.
    akimbo.landmarks[POSE.leftElbow] = { ...akimbo.landmarks[POSE.leftElbow]!, x: 300, y: 230 };
    akimbo.landmarks[POSE.leftWrist] = { ...akimbo.landmarks[POSE.leftWrist]!, x: 245, y: 290 };
    // A top whose long sleeves hang beside its body (x 10..50 and 150..190) down to y 200.
    const longSleeved = hangingSleeveTop(50, 150, 40, 80);
    const placement = placeGarment(longSleeved, bodyFrame(akimbo), {
      scale: garmentScale('M', 'M', 'regular'),
      styling: [],
      tucked: false,
    });
    const layer = renderGarment(longSleeved, placement, W, H);
    const alphaAt = (x: number, y: number): number => layer.alpha[(y - layer.y0) * layer.width + (x - layer.x0)] ?? 0;
    assert.ok(alphaAt(275, 190) > 0.5, 'the upper arm is covered');
    assert.ok(alphaAt(300, 232) > 0.5, 'the elbow is covered');
    assert.ok(alphaAt(272, 260) > 0.5, 'the forearm is covered');
    assert.ok(alphaAt(296, 290) < 0.5, 'nothing hangs straight down from the elbow');
    assert.ok(alphaAt(335, 232) < 0.5, 'nothing stands out past the elbow');
    // Round the outside of the elbow the sleeve's edge is an arc, ray by ray from the joint. It stepped 5 pixels in
    // where the fan, narrower than the sleeve, met it; and it came in 4-pixel steps where a grid cell reached past the
    // fan, and notched where points past the joint flipped to the sleeve's inner side (#98).
    const reach: number[] = [];
    for (let degrees = -60; degrees <= 60; degrees += 3) {
      const [dx, dy] = [Math.cos((degrees * Math.PI) / 180), Math.sin((degrees * Math.PI) / 180)];
      let r = 0;
      while (r < 80 && alphaAt(Math.round(300 + dx * (r + 1)), Math.round(230 + dy * (r + 1))) >= 0.5) r++;
      reach.push(r);
    }
    const jumps = reach.slice(1).map((r, k) => Math.abs(r - reach[k]!));
    assert.ok(Math.max(...jumps) <= 2, `the elbow's edge from the joint, every 3 degrees: ${reach.join(' ')}`);
    // The sleeve's inner part lay over the body in the photo; on the arm it is sleeve all the same (bare skin in front
    // of a garment's body would show through it as holes).
    const sleeves = renderGarment(longSleeved, { ...placement, pieces: placement.pieces.filter((p) => p.skeleton) }, W, H);
    let body = 0;
    for (let i = 0; i < sleeves.alpha.length; i++) if (sleeves.alpha[i]! > 0.5 && sleeves.sleeve[i] === 0) body++;
    assert.equal(body, 0, `${body} sleeve pixels drawn as the garment's body`);
  });

  test('a top keeps its own proportions: as long for the width its chest is drawn at as in its photo', () => {
    const pairs = pairsOf('M');
    const { leftArmpit, rightArmpit, leftHem, leftShoulder } = tee.landmarks;
    const chest = len(sub(target(pairs, leftArmpit), target(pairs, rightArmpit)));
    const hemDepth = target(pairs, leftHem).y - body.origin.y;
    const ownDepth = leftHem!.y - leftShoulder!.y;
    const ownChest = leftArmpit!.x - rightArmpit!.x;
    // The drawn body's chest (about 90) is narrower than its shoulders (100): scaled from the shoulders, the tee was
    // drawn longer than its chest allows.
    assert.ok(chest < body.unit * 0.97, `the chest is drawn ${chest.toFixed(1)} wide against shoulders ${body.unit}`);
    close(hemDepth / chest, ownDepth / ownChest, 0.03, 'length over chest width');
  });

  test('a top hanging loose from its straps (a jersey) is drawn as wide under the arms as its own shoulders put it', () => {
    // The tee's shoulders 100 apart, its armpits 100 apart too: a jersey's landmarks put its shoulders where a body
    // as wide as it is under the arms has them.
    const jersey: GarmentCutout = {
      ...tee,
      landmarks: { ...tee.landmarks, leftArmpit: { x: 150, y: 70 }, rightArmpit: { x: 50, y: 70 }, hangsLoose: true },
    };
    const chestOf = (cutout: GarmentCutout): number => {
      const pairs = placeGarment(cutout, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false }).pieces[0]!.pairs;
      const at = (p: Point | undefined): Point => pairs.find((q) => q.from === p)!.to;
      return len(sub(at(cutout.landmarks.leftArmpit), at(cutout.landmarks.rightArmpit)));
    };
    const fitted = chestOf({ ...jersey, landmarks: { ...jersey.landmarks, hangsLoose: false } });
    // Fitted to the body's chest (about 90 of the shoulders' 100, with its ease), it came out narrower than itself.
    assert.ok(fitted < body.unit * 0.97, `fitted, the chest is ${fitted.toFixed(1)} wide`);
    close(chestOf(jersey), body.unit, 1, 'hanging loose, as wide as its shoulders put it');
  });

  test('a neckline seen with the inside back behind it goes at the base of the neck; a deep V is left where it lies', () => {
    const seamed = (y: number) => ({ ...tee, landmarks: { ...tee.landmarks, neckSeam: { x: 100, y } } });
    const seamTarget = (cutout: GarmentCutout): Point | undefined =>
      placeGarment(cutout, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false }).pieces[0]!.pairs.find(
        (p) => p.from === cutout.landmarks.neckSeam,
      )?.to;
    // 25 pixels below the neck's ends on a tee 100 wide: carried with the shoulders it would land 25 below them.
    const round = seamTarget(seamed(45));
    const base = (body.shoulderTop.left.y + body.shoulderTop.right.y) / 2 + 0.05 * body.unit;
    assert.ok(round, 'the seam is pinned');
    close(round.y, base, 1e-6, 'at the base of the neck');
    close(round.x, (body.shoulderTop.left.x + body.shoulderTop.right.x) / 2, 1e-6, 'on the centre line');
    assert.equal(seamTarget(seamed(62)), undefined, 'a V 0.42 of the tee deep is not pinned');
  });

  test('a top’s sides widen to the clothes worn under them, where bare arms end them, at most 1.25 times', () => {
    /** How far from the centre line the wearer's left hem corner lands. */
    const hemSide = (clothed: ClothedWidth | null): number => {
      const pairs = placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false, clothed }).pieces[0]!
        .pairs;
      return Math.abs(pairs.find((q) => q.from === tee.landmarks.leftHem)!.to.x - body.origin.x);
    };
    // Arms hanging close to the body take its sides in the layout: the old top reaches 15 % further on the wearer's
    // left (image right), and nothing is told on the other side.
    const wider =
      (k: number): ClothedWidth =>
      (depth) => ({ left: body.halfWidth(depth).left * k, right: 0 });
    const [plain, widened] = [hemSide(null), hemSide(wider(1.15))];
    assert.ok(widened > plain + 3, `the left hem ${widened.toFixed(1)} from the centre, ${plain.toFixed(1)} by the layout alone`);
    const [capped, most] = [hemSide(wider(2)), hemSide(wider(1.25))];
    close(capped, most, 1e-6, 'at most 1.25 times');
  });

  test('a hem a little above where the old top ends is drawn down to it; one far above it, or a jacket’s, is not', () => {
    const hemY = (coverTo: number | null, category: GarmentCutout['category'] = 'top'): number => {
      const placed = placeGarment({ ...tee, category }, body, {
        scale: garmentScale('M', 'M', 'regular'),
        styling: [],
        tucked: false,
        coverTo,
      });
      return placed.pieces[0]!.pairs.find((p) => p.from === tee.landmarks.leftHem)!.to.y;
    };
    const own = hemY(null);
    const depth = own - body.origin.y;
    close(hemY(depth * 1.1), own + depth * 0.1, 1e-6);
    // Past 1.15 of its own depth, within 1.15 of the depth the shoulders' scale gives it (the drawn chest is about
    // 0.95 of the shoulders' scale, so about 1.2 of its own).
    close(hemY(depth * 1.18), own + depth * 0.18, 1e-6);
    assert.equal(hemY(depth * 1.5), own, 'an old top far longer is left to the old-clothing check');
    assert.equal(hemY(depth * 1.1, 'outerwear'), hemY(null, 'outerwear'), 'a jacket shorter than the top under it is worn that way');
    assert.equal(hemY(depth * 0.9), own, 'never shorter');
  });

  test('where the old top ends on the centre line: at its hem above trousers of another colour; unknown on a bare chest', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    const frame = bodyFrame(wearer);
    const repainted = { ...photo, data: photo.data.slice() };
    // The synthetic trousers are close to the old top's navy; make them khaki so the two garments can be told apart.
    for (let i = 0; i < W * H; i++) {
      const j = i * 3;
      if (repainted.data[j] === 60 && repainted.data[j + 1] === 70 && repainted.data[j + 2] === 80) repainted.data.set([190, 170, 110], j);
    }
    const skin = skinModel(repainted, wearer);
    const hem = oldTopHem(repainted, wearer, frame, skin);
    assert.ok(
      hem !== null && Math.abs(frame.origin.y + hem - 310) <= 2,
      `old top ends at y ${hem === null ? null : frame.origin.y + hem}, drawn to 310`,
    );
    const bare = { ...photo, data: photo.data.slice() };
    for (let i = 0; i < W * H; i++) if (bare.data[i * 3] === OLD_TOP[0] && bare.data[i * 3 + 2] === OLD_TOP[2]) bare.data.set(SKIN, i * 3);
    assert.equal(oldTopHem(bare, wearer, frame, skinModel(bare, wearer)), null);
  });

  test('a tucked top ends at the waist', () => {
    const loose = target(pairsOf('M'), tee.landmarks.leftHem).y;
    const tucked = target(pairsOf('M', 'regular', ['tucked'], true), tee.landmarks.leftHem).y;
    assert.ok(tucked < loose && tucked <= 150 + body.torsoLength * 0.86 + 1, `tucked hem at ${tucked}, loose at ${loose}`);
  });
});

describe('placing trousers on a body', () => {
  const { person } = syntheticPerson();
  const body = bodyFrame(person);
  /** Trousers 200×400: waistband across the top, legs parting at the crotch (100, 150) down to the hems. */
  const trousers = (landmarks: Partial<GarmentCutout['landmarks']> = {}): GarmentCutout => ({
    image: { data: new Uint8Array(200 * 400 * 4).fill(255), width: 200, height: 400, channels: 4 },
    category: 'bottom',
    categorySource: 'request',
    photo: 'flat',
    origin: { x: 0, y: 0 },
    landmarks: {
      waistbandLeft: { x: 190, y: 5 },
      waistbandRight: { x: 10, y: 5 },
      crotch: { x: 100, y: 150 },
      leftLegHemOuter: { x: 190, y: 395 },
      leftLegHemInner: { x: 110, y: 395 },
      rightLegHemOuter: { x: 10, y: 395 },
      rightLegHemInner: { x: 90, y: 395 },
      ...landmarks,
    },
  });
  const options = { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false };

  test('each leg is fitted on its own spline, cut at the crotch, both sharing the waistband and the crotch', () => {
    const { pieces } = placeGarment(trousers(), body, options);
    assert.equal(pieces.length, 2);
    // Cut at the crotch, each leg reaching a little past the cut above it so that the two meet without a gap.
    const [left, right] = [pieces[0]!.split!, pieces[1]!.split!];
    assert.deepEqual([left.from, left.to, right.from, right.to], [100, Infinity, -Infinity, 100]);
    for (const band of [left, right]) {
      assert.ok(band.seam && band.seam.reach > 0 && band.seam.above === 150, JSON.stringify(band));
      assert.ok(inBand(band, band === left ? 99 : 101, 140) && !inBand(band, band === left ? 99 : 101, 160), 'reach above the crotch only');
    }
    for (const piece of pieces)
      assert.ok(
        piece.pairs.some((p) => p.from.x === 100 && p.from.y === 150),
        'the crotch pins both legs',
      );
    // The wearer's left leg (image right) goes down the body's left leg.
    const leftHem = pieces[0]!.pairs.find((p) => p.from.x === 190 && p.from.y === 395)!.to;
    assert.ok(leftHem.x > 200 && leftHem.y > 450, `left hem at ${JSON.stringify(leftHem)}`);
  });

  test('full-length trousers reach the ankles, whatever the waist’s width says; shorts keep their own length', () => {
    const hemY = (g: GarmentCutout): number => {
      const pins = placeGarment(g, body, options).pieces.flatMap((p) => p.pairs);
      return pins.find((p) => p.from.x === 180 && p.from.y === 397)!.to.y;
    };
    const ankleY = person.landmarks[POSE.leftAnkle]!.y;
    // Legs 2.45 waistband widths long (jeans measure 2.6 and more): scaled from the body's waist they ended above the ankles.
    const long = { waistbandLeft: { x: 180, y: 5 }, waistbandRight: { x: 20, y: 5 }, leftLegHemOuter: { x: 180, y: 397 } };
    assert.ok(hemY(trousers(long)) >= ankleY, `full-length trousers end at ${hemY(trousers(long))}, the ankle is at ${ankleY}`);
    // The same waistband with legs 1.3 widths long (shorts).
    const shorts = trousers({
      ...long,
      crotch: { x: 100, y: 100 },
      leftLegHemInner: { x: 110, y: 213 },
      leftLegHemOuter: { x: 180, y: 213 },
    });
    const shortsHem = placeGarment(shorts, body, options)
      .pieces.flatMap((p) => p.pairs)
      .find((p) => p.from.x === 180 && p.from.y === 213)!.to.y;
    assert.ok(shortsHem < person.landmarks[POSE.leftKnee]!.y, `shorts end at ${shortsHem}, above the knee`);
  });

  test('a skirt keeps its own flare between waist and hem, whatever the legs do; trousers’ legs follow the legs', () => {
    // Legs standing together: knees and ankles 10 pixels either side of the centre line.
    const { person: together } = syntheticPerson();
    const centreX = (together.landmarks[POSE.leftHip]!.x + together.landmarks[POSE.rightHip]!.x) / 2;
    for (const [k, side] of [
      [POSE.leftKnee, 1],
      [POSE.leftAnkle, 1],
      [POSE.rightKnee, -1],
      [POSE.rightAnkle, -1],
    ] as const)
      together.landmarks[k] = { ...together.landmarks[k]!, x: centreX + side * 10 };
    const frame = bodyFrame(together);
    // An A-line skirt: 100 wide at the waistband, 180 at the hem.
    const { crotch: _crotch, ...legs } = trousers().landmarks;
    const skirt: GarmentCutout = {
      ...trousers(),
      landmarks: { ...legs, waistbandLeft: { x: 150, y: 5 }, waistbandRight: { x: 50, y: 5 } },
    };
    const pins = placeGarment(skirt, frame, options).pieces.flatMap((p) => p.pairs);
    const pinOf = (from: Point): Point => pins.find((p) => p.from.x === from.x && p.from.y === from.y)!.to;
    // The point halfway down the wearer's left half: between its hem's middle (150, 395) and (125, 5), halfway from
    // the waistband's centre to its side.
    const knee = pinOf({ x: (150 + 125) / 2, y: (395 + 5) / 2 });
    const hem = mid(pinOf({ x: 190, y: 395 }), pinOf({ x: 110, y: 395 }));
    const side = pinOf({ x: 150, y: 5 });
    // On the line from the waistband to the hem, as the skirt is cut (pinned to the leg, 10 pixels from the centre
    // line at the knee, it narrowed there like a mermaid's).
    const expected = (hem.x + (side.x + centreX) / 2) / 2;
    close(knee.x, expected, 3, 'the skirt halfway down');
    // Trousers' legs go where the legs go: halfway between the wearer's left hem (150, 395) and (145, 77.5), halfway
    // from the crotch to the waistband's side.
    const trouserPins = placeGarment(trousers(), frame, options).pieces.flatMap((p) => p.pairs);
    const trouserKnee = trouserPins.find((p) => p.from.x === (150 + 145) / 2 && p.from.y === (395 + 77.5) / 2)!.to;
    assert.ok(Math.abs(trouserKnee.x - (centreX + 10)) < 8, `the trousers' knee at ${trouserKnee.x}, the leg at ${centreX + 10}`);
  });

  test('a skirt’s waistband sits at the natural waist, higher than trousers’ (which sit a little above the hip joints)', () => {
    const waistY = (g: GarmentCutout): number =>
      placeGarment(g, body, options).pieces[0]!.pairs.find((p) => p.from.x === 190 && p.from.y === 5)!.to.y;
    const { crotch: _crotch, ...skirtLandmarks } = trousers().landmarks;
    const skirt: GarmentCutout = { ...trousers(), landmarks: skirtLandmarks };
    const hipY = (body.hip.left.y + body.hip.right.y) / 2;
    const shoulderY = (body.shoulder.left.y + body.shoulder.right.y) / 2;
    assert.ok(waistY(trousers()) > shoulderY + 0.8 * (hipY - shoulderY), `trousers' waistband at ${waistY(trousers())}`);
    assert.ok(waistY(skirt) < shoulderY + 0.75 * (hipY - shoulderY), `the skirt's at ${waistY(skirt)}`);
  });

  test('the waistband widens to the clothes worn at the waist where bare arms end them, not where sleeves run on', () => {
    // The old top drawn wider at the waist than the layout's torso (x 140..260 against 155..245 at rows 264..295),
    // with bare skin beside it on the image's right (the wearer's left) and the wall on the other side.
    const { image, person: wearer } = syntheticPerson();
    const frame = bodyFrame(wearer);
    for (let y = 264; y < 296; y++) {
      for (let x = 140; x < 272; x++) {
        image.data.set(x < 260 ? OLD_TOP : SKIN, (y * W + x) * 3);
        wearer.matte.data[y * W + x] = 255;
      }
    }
    const clothed = clothedWidth(image, wearer, frame, skinModel(image, wearer)!);
    const depth = 0.86 * frame.torsoLength;
    const worn = clothed(depth);
    assert.ok(Math.abs(worn.left - 59.5) <= 2, `the clothes reach ${worn.left} px to the left, up to the skin`);
    assert.equal(worn.right, 0, 'clothes that run on to the wall tell nothing');
    const waist = (g: GarmentCutout, c: ClothedWidth | null) =>
      placeGarment(g, frame, { ...options, clothed: c }).pieces[0]!.pairs.find((p) => p.from.x === 190 && p.from.y === 5)!.to.x;
    const plain = waist(trousers(), null);
    const widened = waist(trousers(), clothed);
    const layout = frame.halfWidth(depth).left;
    assert.ok(widened > plain + 2, `the left waistband at ${widened}, ${plain} by the layout alone`);
    assert.ok(widened - frame.origin.x <= 1.25 * 1.04 * 1.05 * layout + 1, `widened at most 1.25 times: ${widened}`);
  });

  test('the waistband is drawn up to where the old bottoms begin, when that is higher; the legs end where they did', () => {
    const pin = (coverFrom: number | null, from: Point): Point =>
      placeGarment(trousers(), body, { ...options, coverFrom }).pieces[0]!.pairs.find((p) => p.from.x === from.x && p.from.y === from.y)!
        .to;
    const own = 0.86 * body.torsoLength;
    const waist = { x: 190, y: 5 };
    const hem = { x: 190, y: 395 };
    close(pin(own - 20, waist).y, pin(null, waist).y - 20, 1e-6);
    assert.ok(Math.abs(pin(own - 20, hem).y - pin(null, hem).y) <= 1.5, `hem at ${pin(own - 20, hem).y}, ${pin(null, hem).y} before`);
    assert.deepEqual(pin(own + 20, waist), pin(null, waist), 'never lower');
  });

  test('where the old bottoms begin on the centre line: at a top’s hem above them, or below the hips; never at a stripe on the top', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    const frame = bodyFrame(wearer);
    assert.equal(oldBottomsTop(photo, wearer, frame, skinModel(photo, wearer)), null);
    // Khaki trousers from y 270: the old top ends above the hips.
    const repainted = { ...photo, data: photo.data.slice() };
    for (let y = 270; y < 560; y++)
      for (let x = 155; x <= 245; x++) if (wearer.matte.data[y * W + x]! >= 128) repainted.data.set([190, 170, 110], (y * W + x) * 3);
    const top = oldBottomsTop(repainted, wearer, frame, skinModel(repainted, wearer));
    assert.ok(
      top !== null && Math.abs(frame.origin.y + top - 270) <= 2,
      `old bottoms begin at y ${top === null ? null : frame.origin.y + top}, drawn from 270`,
    );
    // A top over the hips with a white stripe across it, over khaki trousers: the stripe is not where the bottoms begin.
    const striped = { ...photo, data: photo.data.slice() };
    for (let y = 310; y < 560; y++)
      for (let x = 155; x <= 245; x++) if (wearer.matte.data[y * W + x]! >= 128) striped.data.set([190, 170, 110], (y * W + x) * 3);
    for (let y = 230; y < 245; y++) for (let x = 155; x <= 245; x++) striped.data.set([250, 250, 250], (y * W + x) * 3);
    const below = oldBottomsTop(striped, wearer, frame, skinModel(striped, wearer));
    assert.ok(
      below === null || Math.abs(frame.origin.y + below - 310) <= 2,
      `old bottoms begin at y ${below === null ? null : frame.origin.y + below}: at the top's hem (310) or unknown`,
    );
  });

  test('where the old bottoms begin higher beside the centre line than on it, that is where they begin', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    const frame = bodyFrame(wearer);
    // Khaki trousers from y 270 over bare skin, but on the centre line (x 192–208) skin shows down to y 285 (a navel
    // below folded forearms, a waistband dipping at the front).
    const dipped = { ...photo, data: photo.data.slice() };
    for (let y = 270; y < 560; y++) {
      for (let x = 155; x <= 245; x++) {
        if (wearer.matte.data[y * W + x]! < 128) continue;
        dipped.data.set(y < 285 && x >= 192 && x <= 208 ? SKIN : [190, 170, 110], (y * W + x) * 3);
      }
    }
    for (let y = 230; y < 270; y++)
      for (let x = 155; x <= 245; x++) if (wearer.matte.data[y * W + x]! >= 128) dipped.data.set(SKIN, (y * W + x) * 3);
    const top = oldBottomsTop(dipped, wearer, frame, skinModel(dipped, wearer));
    assert.ok(
      top !== null && Math.abs(frame.origin.y + top - 270) <= 2,
      `old bottoms begin at y ${top === null ? null : frame.origin.y + top}: at their top beside the centre line, 270, not 285`,
    );
  });

  test('a belt where the old bottoms’ colour is taken is theirs: above bare skin they begin at its top, under a tucked top below it', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    const frame = bodyFrame(wearer);
    const khaki = [190, 170, 110];
    // The belt across the depth at which the bottoms' colour is taken, the trousers' waistband above it.
    const belt = Math.round(frame.origin.y + 0.95 * frame.torsoLength);
    const dressed = (above: readonly number[]): typeof photo => {
      const painted = { ...photo, data: photo.data.slice() };
      const fill = (y0: number, y1: number, colour: readonly number[]): void => {
        for (let y = y0; y < y1; y++)
          for (let x = 155; x <= 245; x++) if (wearer.matte.data[y * W + x]! >= 128) painted.data.set(colour, (y * W + x) * 3);
      };
      fill(230, belt - 14, above);
      fill(belt - 14, belt - 8, khaki);
      fill(belt - 8, belt + 8, [20, 20, 25]);
      fill(belt + 8, 560, khaki);
      return painted;
    };
    const bare = dressed(SKIN);
    const top = oldBottomsTop(bare, wearer, frame, skinModel(bare, wearer));
    assert.ok(
      top !== null && Math.abs(frame.origin.y + top - (belt - 14)) <= 2,
      `over bare skin at y ${top === null ? null : frame.origin.y + top}, drawn from ${belt - 14}`,
    );
    // A top tucked in, down to the belt: what lies above it is no waistband of the bottoms.
    const tucked = dressed(OLD_TOP);
    for (let y = belt - 14; y < belt - 8; y++)
      for (let x = 155; x <= 245; x++) if (wearer.matte.data[y * W + x]! >= 128) tucked.data.set(OLD_TOP, (y * W + x) * 3);
    const under = oldBottomsTop(tucked, wearer, frame, skinModel(tucked, wearer));
    assert.ok(
      under !== null && Math.abs(frame.origin.y + under - (belt + 8)) <= 2,
      `under a tucked top at y ${under === null ? null : frame.origin.y + under}, the belt ends at ${belt + 8}`,
    );
  });

  test('the two legs meet along the fly without a gap when the body’s legs stand close together', () => {
    const { person: closeLegs } = syntheticPerson();
    // The wearer's left knee and ankle under the body's centre: the two legs' splines bend apart above the crotch.
    for (const joint of [POSE.leftKnee, POSE.leftAnkle]) closeLegs.landmarks[joint] = { ...closeLegs.landmarks[joint]!, x: 200 };
    const garment = trousers();
    const placement = placeGarment(garment, bodyFrame(closeLegs), options);
    assert.equal(placement.pieces.length, 2);
    const layer = renderGarment(garment, placement, W, H);
    const crotch = placement.pieces[0]!.pairs.find((p) => p.from.x === 100 && p.from.y === 150)!.to;
    let rows = 0;
    for (let y = Math.ceil(layer.y0 + 5); y < crotch.y - 2; y++) {
      const row = Array.from(layer.alpha.subarray((y - layer.y0) * layer.width, (y - layer.y0 + 1) * layer.width));
      const first = row.findIndex((a) => a >= 0.5);
      const last = row.length - 1 - [...row].reverse().findIndex((a) => a >= 0.5);
      if (first < 0) continue;
      rows++;
      const gaps = row.slice(first, last + 1).filter((a) => a < 0.5).length;
      assert.equal(gaps, 0, `row ${y}: ${gaps} pixels open between the legs above the crotch`);
    }
    assert.ok(rows > 20, `${rows} rows checked`);
  });

  test('a "crotch" whose legs are not on their own sides of it (an asymmetric skirt) stays one piece', () => {
    const skirt = trousers({ leftLegHemInner: { x: 20, y: 395 } });
    assert.equal(placeGarment(skirt, body, options).pieces.length, 1);
  });
});

describe('rendering and compositing', () => {
  const { image, person } = syntheticPerson();
  const tee = syntheticTee();
  const body = bodyFrame(person);
  const placement = placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false });
  const layer = renderGarment(tee, placement, W, H);
  const out = compose({ image, person, layers: [{ layer, category: 'top' }] });
  const pixel = (buffer: Uint8Array, x: number, y: number): number[] => Array.from(buffer.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));

  test('a cut-out’s inside back is carried onto the layer where the garment lands', () => {
    // The tee's top band (rows 20–39 of its body) marked as inside back.
    const insideBack = new Uint8Array(tee.image.width * tee.image.height);
    for (let y = 20; y < 40; y++) for (let x = 50; x < 150; x++) insideBack[y * tee.image.width + x] = 1;
    const marked = renderGarment({ ...tee, insideBack }, placement, W, H);
    assert.ok(marked.insideBack, 'the layer has the mark');
    assert.equal(layer.insideBack, undefined, 'a cut-out without it gives a layer without it');
    let inside = 0;
    let opaque = 0;
    for (let o = 0; o < marked.alpha.length; o++) {
      if (marked.alpha[o]! < 0.5) continue;
      opaque++;
      inside += marked.insideBack[o]!;
    }
    // The band is a tenth of the tee's body, less of it with the sleeves.
    assert.ok(inside > 0.03 * opaque && inside < 0.15 * opaque, `${inside} of ${opaque} opaque pixels marked`);
    const row = (y: number): number => marked.insideBack![(y - marked.y0) * marked.width + 200 - marked.x0]!;
    assert.equal(row(marked.y0 + marked.height - 5), 0, 'the hem is not marked');
  });

  test('the garment lands on the torso, opaque, in its own colour', () => {
    const i = (200 - layer.y0) * layer.width + (200 - layer.x0);
    assert.ok(layer.alpha[i]! > 0.99, `alpha at the chest ${layer.alpha[i]}`);
    const [r, g, b] = pixel(out, 200, 200);
    assert.ok(r! > 180 && g! < 80 && b! < 80, `chest is the tee's red: ${[r, g, b]}`);
  });

  test('the face, the hands and the wall far from the garment keep their exact bytes', () => {
    const { labels } = person.layout;
    let changed = 0;
    let checked = 0;
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const label = labels[y * W + x]!;
        const far = x < layer.x0 - 2 || x >= layer.x0 + layer.width + 2 || y < layer.y0 - 2 || y >= layer.y0 + layer.height + 2;
        if (label === REGION.head || label === REGION.leftHand || label === REGION.rightHand || (label === REGION.background && far)) {
          checked++;
          for (let c = 0; c < 3; c++) if (out[(y * W + x) * 3 + c] !== image.data[(y * W + x) * 3 + c]) changed++;
        }
      }
    }
    assert.ok(checked > 5000, `checked ${checked} pixels`);
    assert.equal(changed, 0);
  });

  test('bare forearms stay in front of the garment; the old long sleeve below the new short one becomes skin', () => {
    // The left forearm at (280, 280) is skin in the photo and stays exactly so.
    assert.deepEqual(pixel(out, 280, 280), pixel(image.data, 280, 280));
    // The old sleeve near the elbow, below the new short sleeve's end: no longer the old top's dark blue.
    const elbow = pixel(out, 272, 232);
    const distanceToOld = Math.hypot(elbow[0]! - OLD_TOP[0], elbow[1]! - OLD_TOP[1], elbow[2]! - OLD_TOP[2]);
    const distanceToSkin = Math.hypot(elbow[0]! - SKIN[0], elbow[1]! - SKIN[1], elbow[2]! - SKIN[2]);
    assert.ok(distanceToSkin < 50 && distanceToOld > 150, `old sleeve at the elbow became ${elbow}`);
  });

  test('a bare forearm beside a long sleeve drawn too narrow is covered by the garment; below a short sleeve it stays', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    // A garment's body over the torso and the left arm, its sleeve tube 6 px either side of the arm's bones (the
    // forearm is 11 px either side: bare skin), down to `end` px below the shoulder.
    const sleeved = (end: number): Layer => {
      const layer = greyLayer(150, 140, 150, 190);
      layer.tube = new Uint8Array(layer.width * layer.height);
      const [shoulder, elbow, wrist] = [POSE.leftShoulder, POSE.leftElbow, POSE.leftWrist].map((k) => wearer.landmarks[k]!);
      for (let y = 0; y < layer.height; y++) {
        for (let x = 0; x < layer.width; x++) {
          const [px, py] = [layer.x0 + x, layer.y0 + y];
          const near = (a: { x: number; y: number }, b: { x: number; y: number }): boolean => {
            const t = Math.max(
              0,
              Math.min(1, ((px - a.x) * (b.x - a.x) + (py - a.y) * (b.y - a.y)) / ((b.x - a.x) ** 2 + (b.y - a.y) ** 2)),
            );
            return Math.hypot(a.x + t * (b.x - a.x) - px, a.y + t * (b.y - a.y) - py) < 6;
          };
          if (py < shoulder!.y + end && (near(shoulder!, elbow!) || near(elbow!, wrist!)))
            layer.sleeve[y * layer.width + x] = layer.tube[y * layer.width + x] = 1;
        }
      }
      return layer;
    };
    // 9 px across the forearm from its bones, at mid-forearm: bare skin outside the tube.
    const [x, y] = [289, 279];
    assert.deepEqual(pixel(photo.data, x, y), [...SKIN]);
    const long = compose({ image: photo, person: wearer, layers: [{ layer: sleeved(165), category: 'top' }] });
    assert.ok(
      Math.hypot(...pixel(long, x, y).map((v, c) => v - SKIN[c]!)) > 60,
      `a slit of skin beside the long sleeve: ${pixel(long, x, y)}`,
    );
    const short = compose({ image: photo, person: wearer, layers: [{ layer: sleeved(60), category: 'top' }] });
    assert.deepEqual(pixel(short, x, y), [...SKIN], 'the bare forearm below a short sleeve stays');
  });

  test('a speck of a garment cut off from the rest is not drawn; the garment is', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    // Over the torso: an 80 × 80 block, and 10 px below it a 3 × 3 speck of the same garment (0.14 % of the block).
    const layer = greyLayer(160, 150, 80, 100, { alpha: 0 });
    for (let y = 0; y < 80; y++) for (let x = 0; x < 80; x++) layer.alpha[y * 80 + x] = 1;
    for (let y = 90; y < 93; y++) for (let x = 40; x < 43; x++) layer.alpha[y * 80 + x] = 1;
    const out = compose({ image: photo, person: wearer, layers: [{ layer, category: 'top' }] });
    assert.deepEqual(pixel(out, 201, 241), pixel(photo.data, 201, 241), 'the speck');
    assert.ok(distanceTo(pixel(out, 200, 190), [200, 200, 200]) < 40, `the block: ${pixel(out, 200, 190)}`);
  });

  test('a layered top (a knit vest) leaves the old top it is worn over: the old sleeve keeps its bytes', () => {
    const layered = compose({ image, person, layers: [{ layer: renderGarment(tee, placement, W, H), category: 'top', layered: true }] });
    assert.deepEqual(pixel(layered, 272, 232), pixel(image.data, 272, 232));
  });

  test('beside a bare forearm, what its region takes in that is not skin (the trousers by a hanging hand) stays', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    // Dark trouser cloth just outside the left forearm (x 270–292 at y 290), inside its region in the layout.
    const patch = paintPatch(photo, wearer, { x0: 293, x1: 298, y0: 280, y1: 300 }, [60, 70, 80], REGION.leftLowerArm);
    const drawn = compose({ image: photo, person: wearer, layers: [{ layer: renderGarment(tee, placement, W, H), category: 'top' }] });
    const changed = patch.filter((i) => [0, 1, 2].some((c) => drawn[i * 3 + c] !== photo.data[i * 3 + c])).length;
    assert.equal(changed, 0, `${changed} of ${patch.length} pixels beside the bare forearm were painted over as an old sleeve`);
  });

  test('the old top’s loose sides go beside a new top, and stay across a band below its hem (no notches of wall)', () => {
    // A short new top over the middle of the torso from the shoulders to y 255; the old top runs on below it (the
    // torso's label to y 270) and stands out past the torso's core (shoulders to hip joints) at its sides.
    const short = greyLayer(170, 150, 60, 106);
    const composed = compose({ image, person, layers: [{ layer: short, category: 'top' }] });
    assert.equal(person.layout.labels[250 * W + 158], REGION.torso);
    assert.equal(person.layout.labels[265 * W + 158], REGION.torso);
    const nearOld = (c: number[]): boolean => Math.hypot(c[0]! - OLD_TOP[0], c[1]! - OLD_TOP[1], c[2]! - OLD_TOP[2]) < 30;
    assert.ok(!nearOld(pixel(composed, 158, 250)), `beside the new top the old side is taken away: ${pixel(composed, 158, 250)}`);
    assert.deepEqual(pixel(composed, 158, 265), [...OLD_TOP], 'below its hem the old top keeps its side');
  });

  test('the soft outline of an old top’s side taken away goes with it, not left as a thin line', () => {
    const drawn = syntheticPerson();
    // The old top's side meets the wall at x 155 in a soft edge: column 154 is half top, half wall (matte 80).
    const edge = OLD_TOP.map((c, k) => Math.round((c + WALL[k]!) / 2));
    for (let y = 200; y < 256; y++) {
      drawn.image.data.set(edge, (y * W + 154) * 3);
      drawn.person.matte.data[y * W + 154] = 80;
    }
    const short = greyLayer(170, 150, 60, 106);
    const composed = compose({ image: drawn.image, person: drawn.person, layers: [{ layer: short, category: 'top' }] });
    const outline = pixel(composed, 154, 230);
    assert.ok(distanceTo(outline, WALL) < 12, `the outline became ${outline}, the wall is ${WALL}`);
  });

  test('a wide soft edge of an old top under a new one goes with it; a bare forearm’s stays', () => {
    const drawn = syntheticPerson();
    const blend = (c: readonly number[], t: number): number[] => c.map((v, k) => Math.round(v * t + WALL[k]! * (1 - t)));
    // A pale top against a pale wall: its side (x 155) fades into the wall over 8 columns (x 147–154), rows 265–300.
    for (let y = 265; y < 300; y++)
      for (let x = 147; x < 155; x++) {
        drawn.image.data.set(blend(OLD_TOP, (x - 146) / 9), (y * W + x) * 3);
        drawn.person.matte.data[y * W + x] = 20 + 12 * (x - 147);
      }
    // The bare left forearm's edge (x 126) fades the same way over x 126–131, rows 320–330.
    for (let y = 320; y < 330; y++)
      for (let x = 126; x < 132; x++) {
        drawn.image.data.set(blend(SKIN, (132 - x) / 7), (y * W + x) * 3);
        drawn.person.matte.data[y * W + x] = 20 + 16 * (131 - x);
      }
    // A new top exactly over the torso: none of the soft edge is covered.
    const composed = compose({
      image: drawn.image,
      person: drawn.person,
      layers: [{ layer: greyLayer(155, 140, 91, 170), category: 'top' }],
    });
    for (const x of [148, 151, 154]) {
      const edge = pixel(composed, x, 280);
      assert.ok(distanceTo(edge, WALL) < 8, `the old top's soft edge at x ${x} became ${edge}, the wall is ${WALL}`);
    }
    for (const x of [126, 129, 131])
      assert.deepEqual(pixel(composed, x, 325), pixel(drawn.image.data, x, 325), `the forearm's edge at x ${x}`);
  });

  test('skin-coloured specks on an old sleeve (a light seam, pink cloth) are covered, not kept in front as bare arm', () => {
    const drawn = syntheticPerson();
    // Every third pixel of a patch of the old sleeve on the left upper arm is the skin's colour.
    for (let y = 190; y < 200; y++) for (let x = 258; x < 268; x += 3) drawn.image.data.set(SKIN, (y * W + x) * 3);
    assert.equal(drawn.person.layout.labels[195 * W + 261], REGION.leftUpperArm);
    // A new top's body (not its sleeve) laid over the upper arm.
    const block = greyLayer(240, 170, 50, 50);
    const composed = compose({ image: drawn.image, person: drawn.person, layers: [{ layer: block, category: 'top' }] });
    const speck = pixel(composed, 261, 195);
    assert.ok(distanceTo(speck, [200, 200, 200]) < 30, `the speck became ${speck}`);
  });

  test('a hand stays in front of a new garment, but not what lies under it in its region (a pocket’s dark edge)', () => {
    const drawn = syntheticPerson();
    // The right hand's region runs from y 320 to 354 around x 115; its lowest rows become a dark pocket edge.
    for (let y = 346; y < 356; y++) for (let x = 100; x < 130; x++) drawn.image.data.set(OLD_TOP, (y * W + x) * 3);
    assert.equal(drawn.person.layout.labels[352 * W + 115], REGION.rightHand);
    const block = greyLayer(95, 300, 40, 60, { sleeve: true });
    const composed = compose({ image: drawn.image, person: drawn.person, layers: [{ layer: block, category: 'top' }] });
    assert.deepEqual(pixel(composed, 115, 330), pixel(drawn.image.data, 115, 330), 'the bare hand keeps its bytes');
    const pocket = pixel(composed, 115, 352);
    assert.ok(distanceTo(pocket, [200, 200, 200]) < 30, `the pocket's edge became ${pocket}`);
  });

  test('the rest of a hand that the layout gives to another region stays in front with it; skin past the hand does not', () => {
    const drawn = syntheticPerson();
    // A broad hand: skin from the right hand's side out to x 150 (rows 328..343), which the layout leaves outside the
    // hand's region. The hand runs from the wrist (115, 320) to its knuckles (115, 343.5), 100 px between shoulders.
    for (let y = 328; y < 344; y++) {
      for (let x = 126; x < 150; x++) {
        drawn.image.data.set(SKIN, (y * W + x) * 3);
        drawn.person.matte.data[y * W + x] = 255;
      }
    }
    const label = drawn.person.layout.labels[336 * W + 130];
    assert.ok(label !== REGION.rightHand && label !== REGION.rightLowerArm, `(130, 336) is labelled ${label}`);
    const composed = compose({
      image: drawn.image,
      person: drawn.person,
      layers: [{ layer: greyLayer(95, 300, 60, 60), category: 'top' }],
    });
    assert.deepEqual(pixel(composed, 130, 336), pixel(drawn.image.data, 130, 336), 'the hand beside its region keeps its bytes');
    // 30 px from the hand's line, past its breadth (22 px either side): no hand, covered.
    const past = pixel(composed, 145, 336);
    assert.ok(distanceTo(past, [200, 200, 200]) < 30, `the skin past the hand became ${past}`);
  });

  test('the wall seen between a hand’s fingers is covered by a garment behind the hand; the fingers stay', () => {
    const drawn = syntheticPerson();
    // A gap 4 pixels wide between the right hand's fingers (x 112..115, rows 330..341), the wall seen through it.
    for (let y = 330; y < 342; y++) for (let x = 112; x < 116; x++) drawn.image.data.set(WALL, (y * W + x) * 3);
    assert.equal(drawn.person.layout.labels[335 * W + 113], REGION.rightHand);
    const layer = greyLayer(95, 300, 60, 60);
    layer.rgb.fill(40);
    const composed = compose({ image: drawn.image, person: drawn.person, layers: [{ layer, category: 'top' }] });
    const gap = pixel(composed, 113, 335);
    assert.ok(distanceTo(gap, [40, 40, 40]) < 30, `the gap between the fingers became ${gap}`);
    assert.deepEqual(pixel(composed, 107, 335), pixel(drawn.image.data, 107, 335), 'a finger beside it keeps its bytes');
  });

  test('a hand’s region meets a garment in a smooth edge, not in the layout’s steps', () => {
    const drawn = syntheticPerson();
    const { labels } = drawn.person.layout;
    // The right hand's region in the layout's cells' steps, 4 pixels wide and 3 tall, its skin on the old top's cloth.
    const step = (x: number): number => 330 + 3 * Math.floor((x - 96) / 4);
    for (let y = 316; y < 372; y++) {
      for (let x = 96; x < 136; x++) {
        const hand = y >= step(x);
        labels[y * W + x] = hand ? REGION.rightHand : REGION.torso;
        drawn.image.data.set(hand ? SKIN : OLD_TOP, (y * W + x) * 3);
        drawn.person.matte.data[y * W + x] = 255;
      }
    }
    const layer = greyLayer(90, 300, 56, 80);
    layer.rgb.fill(40);
    const composed = compose({ image: drawn.image, person: drawn.person, layers: [{ layer, category: 'top' }] });
    // Column by column, the first row from the top that is not the layer's dark.
    const columns = Array.from({ length: 36 }, (_, k) => 98 + k);
    const { edges, largestStep } = darkEdges(composed, columns, 316, 372, (x, y) => y * W + x);
    assert.ok(largestStep <= 2, `the hand's edge by column: ${edges.join(' ')}`);
  });

  test('painted skin on a limb that shows no skin of its own is round: darker towards its side than on its axis', () => {
    // Old sleeves down to the wrists: no bare forearm tells the arms' light (warp-limbs.test.ts), so the face's colour
    // is painted, rounded. The left upper arm runs from (250, 150) to (275, 240); at row 225 its axis is at x ≈ 271,
    // and (264, 227) lies 7 px across it (the old sleeve is 14 px wide each side, so the photo's shading is flat at
    // both), both on the old sleeve below the new short sleeve.
    const sleeved = syntheticPerson();
    const { labels } = sleeved.person.layout;
    for (let i = 0; i < W * H; i++) {
      const forearm = labels[i] === REGION.leftLowerArm || labels[i] === REGION.rightLowerArm;
      if (forearm && sleeved.person.matte.data[i]! >= 128) sleeved.image.data.set(OLD_TOP, i * 3);
    }
    const painted = compose({ image: sleeved.image, person: sleeved.person, layers: [{ layer, category: 'top' }] });
    const brightness = (p: number[]): number => p[0]! + p[1]! + p[2]!;
    const axis = pixel(painted, 271, 225);
    const side = pixel(painted, 264, 227);
    assert.ok(distanceTo(axis, SKIN) < 50 && distanceTo(side, SKIN) < 60, `both painted as skin: ${axis}, ${side}`);
    assert.ok(brightness(side) < 0.985 * brightness(axis), `side ${side} is darker than axis ${axis}`);
  });

  test('an old cuff at the wrist below a long sleeve becomes the forearm; a band on a bare wrist stays', () => {
    // A white band across the left wrist (285, 320), where the hand's region begins.
    const band = (photo: RawImage, wearer: PersonAnalysis): number[] => {
      const painted: number[] = [];
      for (let y = 318; y < 330; y++) {
        for (let x = 276; x < 296; x++) {
          const i = y * W + x;
          if (wearer.layout.labels[i] !== REGION.leftHand || wearer.matte.data[i]! < 128) continue;
          photo.data.set([250, 250, 250], i * 3);
          painted.push(i);
        }
      }
      return painted;
    };
    const white = (buffer: Uint8Array, i: number): boolean => buffer[i * 3]! > 240 && buffer[i * 3 + 2]! > 240;
    // Old sleeves down to the wrists: the band is the sleeve's cuff.
    const sleeved = syntheticPerson();
    const { labels } = sleeved.person.layout;
    for (let i = 0; i < W * H; i++) {
      const forearm = labels[i] === REGION.leftLowerArm || labels[i] === REGION.rightLowerArm;
      if (forearm && sleeved.person.matte.data[i]! >= 128) sleeved.image.data.set(OLD_TOP, i * 3);
    }
    const cuff = band(sleeved.image, sleeved.person);
    assert.ok(cuff.length > 40, `the band lies in the hand's region (${cuff.length} px)`);
    const painted = compose({ image: sleeved.image, person: sleeved.person, layers: [{ layer, category: 'top' }] });
    const left = cuff.filter((i) => white(painted, i)).length;
    assert.ok(left < 0.1 * cuff.length, `${left} of the cuff's ${cuff.length} pixels stay white`);
    // Bare forearms: the band is a bracelet, and stays.
    const bare = syntheticPerson();
    const bracelet = band(bare.image, bare.person);
    const kept = compose({ image: bare.image, person: bare.person, layers: [{ layer, category: 'top' }] });
    assert.equal(bracelet.filter((i) => white(kept, i)).length, bracelet.length, 'the bracelet keeps its bytes');
  });
});

describe('folding', () => {
  const tee = syntheticTee();
  const body = bodyFrame(syntheticPerson().person);
  const placement = placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false });

  test('a garment placed on the body as it lies does not fold', () => {
    assert.equal(folds(tee, placement), false);
  });

  test('a piece turned over as a whole (a sleeve drawn mirrored) folds, though all its cells agree', () => {
    // Three pairs make the piece's spline affine: every cell has the same area, here all of one (negative) sign.
    const [a, b, c] = [
      { x: 150, y: 22 },
      { x: 150, y: 80 },
      { x: 182, y: 78 },
    ];
    const mirrored = (p: Point): Point => ({ x: 400 - p.x, y: p.y });
    const sleeve = { pairs: [a, b, c].map((p) => ({ from: p, to: mirrored(p) })), split: { from: 150, to: Infinity } };
    assert.equal(folds(tee, { ...placement, pieces: [...placement.pieces, sleeve] }), true);
  });
});

describe('legs inside new bottoms', () => {
  test('an old trouser leg beside new narrower ones becomes the wall, not skin; below their hem it is painted as a leg', () => {
    const { image, person } = syntheticPerson();
    // New trouser legs over the middle of each old one (x 155..185 and 215..245), from y 330 to 480.
    const [x0, y0, lw, lh] = [150, 330, 100, 150];
    const layer = {
      x0,
      y0,
      width: lw,
      height: lh,
      rgb: new Uint8Array(lw * lh * 3),
      alpha: new Float32Array(lw * lh),
      sleeve: new Uint8Array(lw * lh),
    };
    for (let y = 0; y < lh; y++) {
      for (let x = 0; x < lw; x++) {
        if ((x0 + x >= 215 && x0 + x < 245) || (x0 + x >= 155 && x0 + x < 185)) {
          layer.alpha[y * lw + x] = 1;
          layer.rgb.set([200, 30, 30], (y * lw + x) * 3);
        }
      }
    }
    const out = compose({ image, person, layers: [{ layer, category: 'bottom' }] });
    const at = (x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    assert.ok(distanceTo(at(212, 400), WALL) < 12, `beside the new leg: ${at(212, 400)}`);
    assert.ok(distanceTo(at(228, 520), SKIN) < 60, `below the hem, on the leg: ${at(228, 520)}`);
  });

  test('a skirt leaves the old trousers below its hem as they are; beside it, in the rows it covers, they go', () => {
    const { image, person } = syntheticPerson();
    // A skirt narrower than the old trousers (x 160..240), from y 300 down to y 420.
    const out = compose({ image, person, layers: [{ layer: greyLayer(175, 300, 51, 120), category: 'bottom', skirt: true }] });
    const at = (x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    const photo = (x: number, y: number): number[] => Array.from(image.data.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    assert.deepEqual(at(200, 480), photo(200, 480), 'the trousers below the hem');
    assert.deepEqual(at(170, 430), photo(170, 430), 'the trousers below the hem, at the side');
    assert.ok(distanceTo(at(165, 380), WALL) < 12, `beside the skirt: ${at(165, 380)}`);
  });

  test('an old trouser leg in a skin-like colour (khaki) beside them becomes the wall too', () => {
    const { image, person } = syntheticPerson();
    const skin = skinModel(image, person)!;
    const KHAKI = [210, 170, 135] as const;
    assert.ok(isSkin(skin, ...KHAKI), 'khaki passes for skin by colour');
    for (let i = 330 * W; i < 480 * W; i++) if (image.data[i * 3] === 60) image.data.set(KHAKI, i * 3);
    // New trousers over the middle of the old ones (x 175..225), from y 330 to 480.
    const out = compose({ image, person, layers: [{ layer: greyLayer(175, 330, 51, 150), category: 'bottom' }] });
    const at = (x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    assert.ok(distanceTo(at(165, 400), WALL) < 12, `beside the new trousers: ${at(165, 400)}`);
    assert.ok(distanceTo(at(236, 400), WALL) < 12, `beside the new trousers: ${at(236, 400)}`);
  });
});

describe('the wall filled in where old clothing goes', () => {
  test('is smooth down the photo: a row whose wall beside the person is darker (a shadow’s edge) is no streak across it', () => {
    const { image, person } = syntheticPerson();
    const SHADOW = [120, 120, 120] as const;
    for (let x = 145; x < 160; x++) image.data.set(SHADOW, (400 * W + x) * 3);
    // New trousers over the middle of the old ones (x 175..225): the old trouser leg beside them becomes the wall.
    const out = compose({ image, person, layers: [{ layer: greyLayer(175, 330, 51, 150), category: 'bottom' }] });
    const at = (x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    assert.ok(distanceTo(at(165, 390), WALL) < 12, `beside the new trousers: ${at(165, 390)}`);
    assert.ok(distanceTo(at(165, 400), WALL) < 30, `beside the new trousers, in the shadow’s row: ${at(165, 400)}`);
  });
});

describe('between new trousers’ legs and below them', () => {
  const KHAKI = [210, 170, 135] as const;
  /** New trousers: a seat across x 155..245 from y 330 to 380, with a fly's slit (x 199..200, y 340..360) closed below it, and two legs (x 155..185, 215..245) down to y 480. */
  const trousers = (): Layer => {
    const layer = greyLayer(150, 330, 100, 150);
    for (let y = 0; y < layer.height; y++) {
      for (let x = 0; x < layer.width; x++) {
        const [px, py] = [layer.x0 + x, layer.y0 + y];
        const seat = py < 380 && px >= 155 && px < 245 && !(px >= 199 && px <= 200 && py >= 340 && py < 360);
        const leg = (px >= 155 && px < 185) || (px >= 215 && px < 245);
        layer.alpha[y * layer.width + x] = seat || leg ? 1 : 0;
      }
    }
    return layer;
  };

  test('between the legs, old bottoms in a skin-like colour (a skirt’s middle) become the wall; a fly’s slit keeps its bytes', () => {
    const { image, person } = syntheticPerson();
    for (let i = 310 * W; i < W * H; i++) if (image.data[i * 3] === 60) image.data.set(KHAKI, i * 3);
    assert.ok(isSkin(skinModel(image, person)!, ...KHAKI), 'khaki passes for skin by colour');
    const out = compose({ image, person, layers: [{ layer: trousers(), category: 'bottom' }] });
    const at = (x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    for (const [x, y] of [
      [200, 400],
      [190, 460],
      [210, 390],
    ] as const)
      assert.ok(distanceTo(at(x, y), WALL) < 12, `between the legs at ${x}, ${y}: ${at(x, y)}`);
    assert.deepEqual(at(199, 350), [...KHAKI], 'the fly’s slit');
  });

  test('below their hems the old trousers are painted as legs, but shoes below the ankles and socks of another colour stay', () => {
    const { image, person } = syntheticPerson();
    const CREAM = [220, 200, 150] as const;
    const SOCK = [30, 30, 60] as const;
    const SHOE = [250, 250, 250] as const;
    for (let y = 310; y < 560; y++) {
      for (let x = 160; x <= 240; x++) image.data.set(y >= 545 ? SHOE : y >= 515 && x >= 215 ? SOCK : CREAM, (y * W + x) * 3);
    }
    // Shorts from y 310 to 400; the ankles are at y 540.
    const out = compose({ image, person, layers: [{ layer: greyLayer(155, 310, 91, 90), category: 'bottom' }] });
    const at = (x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    assert.ok(distanceTo(at(230, 470), SKIN) < 60, `the shin: ${at(230, 470)}`);
    assert.ok(distanceTo(at(170, 530), SKIN) < 60, `the other shin above its ankle: ${at(170, 530)}`);
    assert.deepEqual(at(230, 528), [...SOCK], 'the sock');
    for (const x of [170, 230]) assert.deepEqual(at(x, 552), [...SHOE], `the shoe at ${x}`);
  });
});

describe('old bottoms beside new ones at the hips', () => {
  const CREAM = [220, 200, 150] as const;
  test('new bottoms alone go under the old top, which hangs over them down to its hem', () => {
    const { image, person } = syntheticPerson();
    for (let i = 310 * W; i < W * H; i++) if (image.data[i * 3] === 60) image.data.set(CREAM, i * 3);
    // New bottoms from y 270, above the old top's hem at y 310 (160 px below the shoulders' middle).
    const layers = [{ layer: greyLayer(150, 270, 100, 200), category: 'bottom' as const }];
    const kept = compose({ image, person, layers, oldTopHem: 160 });
    const at = (out: Uint8Array, x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    assert.deepEqual(at(kept, 200, 300), [...OLD_TOP], 'the old top over the new waistband');
    assert.deepEqual(at(kept, 200, 330), [200, 200, 200], 'the new bottoms below its hem');
    // Where the old top's hem is not known, the new bottoms are drawn over it.
    assert.deepEqual(at(compose({ image, person, layers }), 200, 300), [200, 200, 200]);
  });

  /**
   * The drawn person in cream trousers with both hands in the pockets: each pixel of the hands' regions painted in
   * `colour(i)` (no skin); their indices.
   */
  const pocketedHands = (colour: (i: number) => readonly number[]) => {
    const { image, person } = syntheticPerson();
    for (let i = 310 * W; i < W * H; i++) if (image.data[i * 3] === 60) image.data.set(CREAM, i * 3);
    const hand: number[] = [];
    for (let i = 0; i < W * H; i++) {
      const label = person.layout.labels[i];
      if (label !== REGION.leftHand && label !== REGION.rightHand) continue;
      image.data.set(colour(i), i * 3);
      person.matte.data[i] = 255;
      hand.push(i);
    }
    return { image, person, hand };
  };

  test('in a hand’s region, where the hand is hidden in a pocket, are covered by new bottoms', () => {
    // Both hands in the pockets: their regions show the cream trousers, no skin.
    const { image, person, hand } = pocketedHands(() => CREAM);
    assert.ok(hand.length > 100, `${hand.length} hand pixels`);
    const out = compose({ image, person, layers: [{ layer: greyLayer(100, 280, 200, 200), category: 'bottom' }] });
    const grey = hand.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), [200, 200, 200]) < 30).length;
    assert.ok(grey > 0.9 * hand.length, `${grey} of ${hand.length} pixels drawn over`);
    // Hands that show their skin stay in front.
    const shown = syntheticPerson();
    for (let i = 310 * W; i < W * H; i++) if (shown.image.data[i * 3] === 60) shown.image.data.set(CREAM, i * 3);
    const drawn = compose({ ...shown, layers: [{ layer: greyLayer(100, 280, 200, 200), category: 'bottom' }] });
    const skinPixels = hand.filter((i) => distanceTo(Array.from(shown.image.data.subarray(i * 3, i * 3 + 3)), SKIN) < 1);
    const kept = skinPixels.filter((i) => [0, 1, 2].every((c) => drawn[i * 3 + c] === shown.image.data[i * 3 + c])).length;
    // A hand's edge is smoothed as bare skin's is: a pixel at a sharp corner of its outline may go under the garment.
    assert.ok(skinPixels.length > 100 && kept >= 0.99 * skinPixels.length, `${kept} of ${skinPixels.length} skin pixels kept`);
  });

  test('in a hand’s region, where the hand is hidden in a pocket, a longer new top covers the old cuff and trousers', () => {
    // Both hands in the pockets: their regions show an old cuff above the cream trousers, no skin.
    const pocketed = pocketedHands((i) => (Math.floor(i / W) < 330 ? OLD_TOP : CREAM));
    const { image, person } = pocketed;
    // Those the new top reaches (x 100..299), away from the forearms' skin (whose colour is averaged in nearer).
    const hand = pocketed.hand.filter((i) => i % W >= 100 && i % W < 300 && Math.floor(i / W) >= 335);
    const out = compose({ image, person, layers: [{ layer: greyLayer(100, 140, 200, 260), category: 'top' }] });
    const grey = hand.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), [200, 200, 200]) < 30).length;
    assert.ok(grey > 0.9 * hand.length, `${grey} of ${hand.length} pixels drawn over`);
  });

  test('become the wall in the rows the new bottoms sheathe; an old top’s hem over the hips stays', () => {
    const { image, person } = syntheticPerson();
    // Cream trousers, told apart from the navy top by colour.
    for (let i = 310 * W; i < W * H; i++) if (image.data[i * 3] === 60) image.data.set(CREAM, i * 3);
    // New bottoms narrower than the old trousers' hips (x 185..215), from y 300 down: the hips (labelled from y 280
    // to 310, the old top down to 310) are sheathed from y 300 on.
    const layer = greyLayer(185, 300, 31, 180);
    assert.equal(person.layout.labels[310 * W + 182], REGION.hips);
    assert.equal(person.layout.labels[305 * W + 170], REGION.hips);
    const out = compose({ image, person, layers: [{ layer, category: 'bottom' }] });
    const at = (x: number, y: number): number[] => Array.from(out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
    assert.ok(distanceTo(at(182, 310), WALL) < 12, `old trousers beside the new ones: ${at(182, 310)}`);
    assert.deepEqual(at(170, 305), [...OLD_TOP], 'the old top over the hips');
  });

  test('between a hanging arm and new bottoms that reach it are covered by them; the arm stays in front', () => {
    const { image, person } = syntheticPerson();
    // Old trouser cloth just outside the left forearm (which spans about x 271..293 at y 305), inside its region.
    const patch = paintPatch(image, person, { x0: 296, x1: 301, y0: 300, y1: 315 }, [60, 70, 80], REGION.leftLowerArm);
    // New bottoms wider than the hips, out past the forearm.
    const out = compose({ image, person, layers: [{ layer: greyLayer(160, 295, 150, 100), category: 'bottom' }] });
    const grey = patch.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), [200, 200, 200]) < 30).length;
    assert.ok(grey > 0.9 * patch.length, `${grey} of ${patch.length} pixels beside the arm drawn over`);
    const arm = (305 * W + 282) * 3;
    assert.deepEqual(Array.from(out.subarray(arm, arm + 3)), Array.from(image.data.subarray(arm, arm + 3)), 'the forearm');
  });

  test('go behind the forearm where the layout gives its edge to the hips: behind its skin inside its shape', () => {
    const { image, person } = syntheticPerson();
    // The layout's coarse regions give a block of the left forearm (x 271..293 at y 305) to the hips.
    const block: number[] = [];
    for (let y = 302; y < 308; y++) {
      for (let x = 276; x < 290; x++) {
        person.layout.labels[y * W + x] = REGION.hips;
        block.push(y * W + x);
      }
    }
    const out = compose({ image, person, layers: [{ layer: greyLayer(160, 295, 150, 100), category: 'bottom' }] });
    const kept = block.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), SKIN) < 12).length;
    assert.ok(kept > 0.9 * block.length, `${kept} of ${block.length} pixels of the forearm in front of the bottoms`);
  });
});

describe('old bottoms in a bold print under a plain top', () => {
  /**
   * The drawn person in a plain white top down to y 292 over trousers printed with black lines, 2 pixels wide: every
   * 6 pixels on the legs, every 10 at the hips left of x 183 (where a few pixels' mean is nearer the top's white than
   * the print's mean grey, as a zebra print's pale patches are).
   */
  const printed = () => {
    const { image, person } = syntheticPerson();
    const WHITE: [number, number, number] = [245, 245, 245];
    const patch: number[] = [];
    for (let i = 0; i < W * H; i++) {
      const j = i * 3;
      const [x, y] = [i % W, Math.floor(i / W)];
      const top = image.data[j] === OLD_TOP[0] && image.data[j + 2] === OLD_TOP[2] && x >= 155 && x <= 245 && y >= 140;
      if (top && y < 292) image.data.set(WHITE, j);
      else if (top || image.data[j] === 60) {
        const sparse = y >= 296 && y < 307 && x >= 160 && x < 183;
        if (sparse) patch.push(i);
        image.data.set(x % (sparse ? 10 : 6) < 2 ? [20, 20, 20] : [240, 240, 240], j);
      }
    }
    return { image, person, patch };
  };

  test('beside new bottoms the print becomes the wall, its pale patches too; the plain top keeps its bytes', () => {
    const { image, person, patch } = printed();
    assert.ok(
      patch.every((i) => person.layout.labels[i] === REGION.hips),
      'the sparse print lies at the hips',
    );
    const out = compose({ image, person, layers: [{ layer: greyLayer(185, 300, 31, 180), category: 'bottom' }] });
    const walled = patch.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), WALL) < 12).length;
    assert.ok(walled > 0.9 * patch.length, `${walled} of ${patch.length} pixels of the print beside the new bottoms became the wall`);
    const top = (250 * W + 170) * 3;
    assert.deepEqual(Array.from(out.subarray(top, top + 3)), Array.from(image.data.subarray(top, top + 3)), 'the plain top');
  });

  test('inside a hanging arm’s shape, where the print is, new bottoms that reach it cover it; the arm stays in front', () => {
    const { image, person } = printed();
    // The print against the left forearm's outer side (its skin spans about x 271..293 at y 305), in its region: the
    // arm's measured shape takes in a few pixels of it.
    paintPatch(image, person, { x0: 289, x1: 306, y0: 292, y1: 324 }, [240, 240, 240], REGION.leftLowerArm);
    for (let y = 292; y < 324; y++) for (let x = 289; x < 306; x++) if (x % 6 < 2) image.data.set([20, 20, 20], (y * W + x) * 3);
    const limbs = limbPaint(image, person, skinModel(image, person)!, CORE_RADIUS2);
    // Those not next to the skin, whose edge against the garment is anti-aliased.
    const skinAt = (i: number): boolean => image.data[i * 3] === SKIN[0];
    const inShape: number[] = [];
    for (let y = 300; y < 316; y++)
      for (let x = 285; x < 301; x++)
        if (limbs.shape[y * W + x]! > OUTSIDE && !skinAt(y * W + x) && !skinAt(y * W + x - 1)) inShape.push(y * W + x);
    assert.ok(inShape.length >= 16, `${inShape.length} pixels of the print inside the arm's shape`);
    const out = compose({ image, person, layers: [{ layer: greyLayer(160, 295, 150, 100), category: 'bottom' }] });
    const grey = inShape.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), [200, 200, 200]) < 30).length;
    assert.ok(grey > 0.9 * inShape.length, `${grey} of ${inShape.length} pixels of the print inside the arm's shape drawn over`);
    const arm = (305 * W + 282) * 3;
    assert.deepEqual(Array.from(out.subarray(arm, arm + 3)), Array.from(image.data.subarray(arm, arm + 3)), 'the forearm');
  });
});

describe('light trousers beside a darker arm', () => {
  /**
   * The drawn person with darker skin in cream trousers; just outside the left forearm (which spans about x 271..293
   * at y 305), inside its region, their cloth in a shade that passes the face's skin test (lighter than the face, as
   * its highlights are) but is far paler than the arm.
   */
  const creamBesideArm = () => {
    const { image, person } = syntheticPerson();
    const DARK: [number, number, number] = [120, 75, 60];
    const TROUSERS: [number, number, number] = [200, 185, 160];
    for (let i = 0; i < W * H; i++) {
      const j = i * 3;
      const [r, g, b] = [image.data[j]!, image.data[j + 1]!, image.data[j + 2]!];
      if (r === SKIN[0] && g === SKIN[1] && b === SKIN[2]) image.data.set(DARK, j);
      else if (r === 60 && g === 70 && b === 80) image.data.set(TROUSERS, j);
    }
    const patch = paintPatch(image, person, { x0: 296, x1: 301, y0: 300, y1: 315 }, [180, 146, 120], REGION.leftLowerArm);
    // And lower, beside the legs (the hips end by y 326).
    const low = paintPatch(image, person, { x0: 297, x1: 302, y0: 330, y1: 338 }, [180, 146, 120], REGION.leftLowerArm);
    return { image, person, patch, low };
  };
  const arm = (305 * W + 282) * 3;

  test('beside new bottoms, it becomes the wall; the arm keeps its bytes', () => {
    const { image, person, patch, low } = creamBesideArm();
    assert.ok(isSkin(skinModel(image, person)!, 180, 146, 120), 'the cream passes the skin test');
    // New bottoms narrower than the old trousers' hips, from y 300 down: the patches lie beside them.
    const out = compose({ image, person, layers: [{ layer: greyLayer(185, 300, 31, 180), category: 'bottom' }] });
    for (const [pixels, where] of [
      [patch, 'at the hips'],
      [low, 'beside the legs'],
    ] as const) {
      const walled = pixels.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), WALL) < 20).length;
      assert.ok(walled > 0.9 * pixels.length, `${walled} of ${pixels.length} cream pixels beside the arm ${where} became the wall`);
    }
    assert.deepEqual(Array.from(out.subarray(arm, arm + 3)), Array.from(image.data.subarray(arm, arm + 3)), 'the forearm');
  });

  test('under new bottoms that reach it, they cover it; the arm stays in front', () => {
    const { image, person, patch } = creamBesideArm();
    const out = compose({ image, person, layers: [{ layer: greyLayer(160, 295, 150, 100), category: 'bottom' }] });
    const grey = patch.filter((i) => distanceTo(Array.from(out.subarray(i * 3, i * 3 + 3)), [200, 200, 200]) < 30).length;
    assert.ok(grey > 0.9 * patch.length, `${grey} of ${patch.length} cream pixels beside the arm drawn over`);
    assert.deepEqual(Array.from(out.subarray(arm, arm + 3)), Array.from(image.data.subarray(arm, arm + 3)), 'the forearm');
  });
});

describe('cloth resting on the shoulders', () => {
  test('square corners standing off the shoulders go; the torso, the collar and what hangs below the armpits stay', () => {
    const { person } = syntheticPerson();
    const body = bodyFrame(person);
    // A flat garment's square top, drawn as one opaque block from above the shoulders to below the hips.
    const [x0, y0, width, height] = [100, 120, 200, 280];
    const layer = greyLayer(x0, y0, width, height);
    restOnShoulders(layer, body, person);
    const alpha = (x: number, y: number): number => layer.alpha[(y - y0) * width + x - x0]!;
    assert.equal(alpha(115, 130), 0, 'a corner above and beyond the right shoulder');
    assert.equal(alpha(285, 130), 0, 'a corner above and beyond the left shoulder');
    assert.equal(alpha(200, 200), 1, 'the chest');
    assert.equal(alpha(200, 125), 1, 'the collar beside the neck');
    assert.equal(alpha(250, 160), 1, 'the top of the left shoulder');
    assert.equal(alpha(105, 390), 1, 'loose cloth well below the armpits');
  });

  test('beside the neck, cloth over the wall below long hair goes, sloping; over the person and at the collar it stays', () => {
    const { person } = syntheticPerson();
    const body = bodyFrame(person);
    // Beside the neck the wall shows above the shoulders' outline (y 137); on the left, hair falls there (x 215–234).
    for (let y = 110; y < 135; y++)
      for (let x = 215; x < 235; x++) ((person.matte.data[y * W + x] = 255), (person.layout.labels[y * W + x] = REGION.head));
    const [x0, y0, width, height] = [100, 100, 200, 300];
    const layer = restOnShoulders(greyLayer(x0, y0, width, height), body, person);
    const alpha = (x: number, y: number): number => layer.alpha[(y - y0) * width + x - x0]!;
    // 0.28 and 0.25 shoulder widths from the centre line over the wall: 0.14 and 0.17 above the shoulder's outline.
    assert.equal(alpha(172, 123), 0, 'cloth in the air over the wall, far beside the neck');
    assert.equal(alpha(175, 120), 0, 'cloth in the air over the wall, beside the neck');
    // Nearer the neck the margin is wider: the cut slopes up towards it.
    assert.equal(alpha(178, 130), 1, 'cloth just above the shoulder, nearer the neck');
    assert.equal(alpha(185, 115), 1, 'a collar over the wall within 0.2 shoulder widths of the centre line');
    assert.equal(alpha(225, 120), 1, 'cloth over the person (hair beside the neck) on the other side');
  });

  test("cloth a little below the shoulders' outline reaches up to it, not over the head, nor from far below", () => {
    const { person } = syntheticPerson();
    const body = bodyFrame(person);
    // The shoulders' outline lies at y 137–141 from x 140 to 260 (the head above it from x 170 to 230), a shoulder
    // width of 100 px. One garment's top lies at y 148, 0.11 shoulder widths below it; another's at y 165.
    const garment = (top: number): Layer => {
      const layer = greyLayer(100, 100, 200, 250, { alpha: 0 });
      for (let y = top - 100; y < 250; y++) layer.alpha.fill(1, y * 200, (y + 1) * 200);
      for (let y = 0; y < 250; y++) for (let x = 0; x < 200; x++) layer.rgb[(y * 200 + x) * 3] = 100 + y;
      return layer;
    };
    const near = reachShoulders(garment(148), body, person);
    const alpha = (layer: Layer, x: number, y: number): number => layer.alpha[(y - 100) * 200 + x - 100]!;
    for (const x of [150, 250]) {
      assert.ok(alpha(near, x, 140) >= 0.9, `the shoulder's top at x ${x} is covered (${alpha(near, x, 140)})`);
      assert.equal(alpha(near, x, 130), 0, `nothing stands above the outline at x ${x}`);
    }
    // Stretched, not filled flat: the garment's rows keep their order (red rises with the row).
    const red = (x: number, y: number): number => near.rgb[((y - 100) * 200 + x - 100) * 3]!;
    assert.ok(red(250, 140) < red(250, 150) && red(250, 150) < red(250, 160), 'the rows keep their order');
    assert.equal(alpha(near, 200, 140), 0, 'the head and neck: nothing drawn above the garment there');
    const far = reachShoulders(garment(165), body, person);
    assert.equal(alpha(far, 250, 155), 0, 'a top 0.28 shoulder widths below the outline is not stretched up');

    // The head's region grown down over the left shoulder: hair there stops the garment; the old top there does not.
    const hairy = syntheticPerson().person;
    const oldTop = new Uint8Array(W * H);
    for (let y = 130; y < 148; y++) {
      for (let x = 236; x < 266; x++) {
        hairy.layout.labels[y * W + x] = REGION.head;
        oldTop[y * W + x] = 1;
      }
    }
    const underHair = reachShoulders(garment(148), bodyFrame(hairy), hairy);
    assert.equal(alpha(underHair, 250, 140), 0, 'below hair on the shoulder the garment stays where it was');
    const overOldTop = reachShoulders(garment(148), bodyFrame(hairy), hairy, oldTop);
    assert.ok(alpha(overOldTop, 250, 140) >= 0.9, "over the old top in the head's region it reaches the outline");
  });

  test('a square corner is rounded where it may be; a straight edge, and a corner on the body, stay', () => {
    // A 60 × 40 block with its top-left corner at (20, 10), and a 6-pixel strap standing up from its top edge.
    const [x0, y0, width, height] = [0, 0, 100, 60];
    const layer = greyLayer(x0, y0, width, height, { alpha: 0 });
    for (let y = 10; y < 50; y++) for (let x = 20; x < 80; x++) layer.alpha[y * width + x] = 1;
    for (let y = 2; y < 10; y++) for (let x = 60; x < 66; x++) layer.alpha[y * width + x] = 1;
    const before = Float32Array.from(layer.alpha);
    const alpha = (x: number, y: number): number => layer.alpha[y * width + x]!;
    // Free only left of x 50: the right half (with the strap) lies on the body.
    roundCorners(layer, 10, height, (x) => x < 50);
    assert.equal(alpha(20, 10), 0, 'the top-left corner goes');
    assert.ok(alpha(22, 13) < 1, 'and so does what a disc of radius 10 cannot reach there');
    assert.equal(alpha(40, 10), 1, 'the top edge between the corners stays');
    assert.equal(alpha(20, 30), 1, 'the left edge stays');
    assert.equal(alpha(79, 10), 1, 'the top-right corner, on the body, stays');
    assert.equal(alpha(62, 4), 1, 'the strap, on the body, stays');
    for (let x = 50; x < width; x++) for (let y = 0; y < height; y++) assert.equal(layer.alpha[y * width + x], before[y * width + x]);
  });
});

describe('a sleeve ending where the hand comes out', () => {
  // The drawn person's left forearm runs from the elbow (275, 240) to the wrist (285, 320); the layout gives its
  // hand's region from the wrist on, and the hand's skin is painted down to the knuckles.
  const sleeveOverForearm = (): Layer => {
    const layer = greyLayer(240, 200, 90, 180);
    layer.tube = new Uint8Array(layer.width * layer.height).fill(1);
    return layer;
  };
  const forearm = { x: 10 / Math.hypot(10, 80), y: 80 / Math.hypot(10, 80) };
  // A point `along` pixels down the forearm from the wrist and `across` pixels off its line.
  const fromWrist = (along: number, across: number): [number, number] => [
    Math.round(285 + along * forearm.x + across * forearm.y),
    Math.round(320 + along * forearm.y - across * forearm.x),
  ];
  const cut = (image: RawImage, person: PersonAnalysis, layer: Layer): ((p: [number, number]) => number) => {
    hemAtWrists(layer, image, person, skinModel(image, person), bodyFrame(person).unit);
    return ([x, y]) => layer.alpha[(y - layer.y0) * layer.width + x - layer.x0]!;
  };

  test('a sleeve drawn over a seen hand ends where its skin begins, square across the forearm; the body stays', () => {
    const { image, person } = syntheticPerson();
    const layer = sleeveOverForearm();
    // The sleeve's inner strip beside the body is the garment's body, not the tube.
    for (let y = 0; y < layer.height; y++) for (let x = 0; x < 10; x++) layer.tube![y * layer.width + x] = 0;
    const alpha = cut(image, person, layer);
    for (const across of [-14, 0, 14]) {
      assert.equal(alpha(fromWrist(-4, across)), 1, `above the wrist, ${across} px off the forearm`);
      assert.equal(alpha(fromWrist(10, across)), 0, `past the wrist, ${across} px off the forearm`);
      assert.equal(alpha(fromWrist(30, across)), 0, `over the hand, ${across} px off the forearm`);
    }
    assert.equal(alpha([245, 360]), 1, "the garment's body past the hem's line");
  });

  test('an old cuff over the wrist is covered: the hem is where the skin begins, not at the wrist', () => {
    const { image, person } = syntheticPerson();
    const { width, channels } = image;
    for (let i = 0; i < person.layout.labels.length; i++) {
      const [x, y] = [(i % width) + 0.5, Math.floor(i / width) + 0.5];
      const along = (x - 285) * forearm.x + (y - 320) * forearm.y;
      if (person.layout.labels[i] === REGION.leftHand && along < 14) image.data.set(OLD_TOP, i * channels);
    }
    const alpha = cut(image, person, sleeveOverForearm());
    assert.equal(alpha(fromWrist(8, 0)), 1, 'over the old cuff');
    assert.equal(alpha(fromWrist(24, 0)), 0, 'over the hand');
  });

  test('over a hand not seen (no region of its own), the sleeve is drawn as long as it was', () => {
    const { image, person } = syntheticPerson();
    const labels = person.layout.labels;
    for (let i = 0; i < labels.length; i++) if (labels[i] === REGION.leftHand) labels[i] = REGION.leftLowerArm;
    const layer = sleeveOverForearm();
    cut(image, person, layer);
    assert.ok(layer.alpha.every((a) => a === 1));
  });
});

describe('gaps inside a garment', () => {
  /** A layer over [x0, x1) × [y0, y1) with solid red where `solid(x)`, blue where `solid(x) === 'blue'`. */
  const blocks = (x0: number, x1: number, y0: number, y1: number, solid: (x: number) => false | 'red' | 'blue') => {
    const width = x1 - x0;
    const height = y1 - y0;
    const layer = {
      x0,
      y0,
      width,
      height,
      rgb: new Uint8Array(width * height * 3),
      alpha: new Float32Array(width * height),
      sleeve: new Uint8Array(width * height),
    };
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const colour = solid(x0 + x);
        if (!colour) continue;
        layer.alpha[y * width + x] = 1;
        layer.rgb.set(colour === 'red' ? [255, 0, 0] : [0, 0, 255], (y * width + x) * 3);
      }
    }
    return {
      layer,
      at: (x: number, y: number) => ({
        alpha: layer.alpha[(y - y0) * width + x - x0]!,
        rgb: [...layer.rgb.subarray(((y - y0) * width + x - x0) * 3, ((y - y0) * width + x - x0) * 3 + 3)],
      }),
    };
  };
  const { image, person } = syntheticPerson();
  const skin = skinModel(image, person);
  const unit = bodyFrame(person).unit;

  test('a narrow gap over the old top is closed with the cloth of its nearer side, mirrored in (a print goes on)', () => {
    const { layer, at } = blocks(150, 250, 200, 220, (x) => (x < 190 ? 'red' : x >= 200 ? 'blue' : false));
    // The left piece printed in columns: every third column a light grey stripe.
    for (let y = 0; y < 20; y++) for (let x = 0; x < 40; x++) if (x % 3 === 0) layer.rgb.set([200, 200, 200], (y * 100 + x) * 3);
    closeGaps(layer, image, person, skin, unit);
    for (let x = 190; x < 200; x++) assert.equal(at(x, 210).alpha, 1, `(${x}, 210) is closed`);
    for (let k = 0; k < 5; k++) assert.deepEqual(at(190 + k, 210).rgb, at(189 - k, 210).rgb, `${190 + k} mirrors ${189 - k}`);
    assert.deepEqual(at(197, 210).rgb, [0, 0, 255], 'the right half from the blue side');
  });

  test('a seam of soft pixels between two pieces of cloth is closed; a translucent stretch of cloth stays', () => {
    // Sleeve (x < 190) and body (x ≥ 191) meet in a column both left soft (alpha 0.7): the old top showed through.
    const seam = blocks(150, 250, 200, 220, (x) => (x !== 190 ? (x < 190 ? 'red' : 'blue') : false));
    for (let y = 0; y < 20; y++) seam.layer.alpha[y * 100 + 40] = 0.7;
    closeGaps(seam.layer, image, person, skin, unit);
    assert.equal(seam.at(190, 210).alpha, 1, 'the seam is cloth');
    // Tulle: 12 columns of alpha 0.6 between opaque cloth. More than 2 pixels from both sides, it stays translucent.
    const tulle = blocks(150, 250, 200, 220, (x) => (x < 184 || x >= 196 ? 'red' : 'blue'));
    for (let y = 0; y < 20; y++) for (let x = 34; x < 46; x++) tulle.layer.alpha[y * 100 + x] = 0.6;
    closeGaps(tulle.layer, image, person, skin, unit);
    assert.equal(tulle.at(190, 210).alpha, 0.6000000238418579, 'the middle of the tulle');
  });

  test('where there is no cloth to mirror (a one-pixel piece), the gap is blended and smoothed down, not streaked', () => {
    // A one-pixel piece at x 189, whose pixel alternates row by row between dark and light (an anti-aliased,
    // striped edge), and the body from x 200.
    const { layer, at } = blocks(150, 250, 200, 230, (x) => (x === 189 ? 'red' : x >= 200 ? 'blue' : false));
    for (let y = 0; y < 30; y++) {
      const shade = y % 2 === 0 ? 20 : 235;
      layer.rgb.set([shade, shade, shade], (y * 100 + 39) * 3);
    }
    closeGaps(layer, image, person, skin, unit);
    assert.equal(at(192, 214).alpha, 1);
    const step = Math.max(...[0, 1, 2].map((c) => Math.abs(at(192, 214).rgb[c]! - at(192, 215).rgb[c]!)));
    assert.ok(step < 20, `rows 214 and 215 differ by ${step}: ${at(192, 214).rgb} against ${at(192, 215).rgb}`);
  });

  test('a gap over an old striped sleeve whose light stripes are skin-coloured is closed: skin is smooth', () => {
    const { image: striped, person: wearer } = syntheticPerson();
    // The old top between x 185 and 205, rows 200–220: stripes of the forearm's skin colour and of a dark grey, 3 rows each.
    const skinColour = [...striped.data.subarray((290 * W + 281) * 3, (290 * W + 281) * 3 + 3)];
    for (let y = 200; y < 220; y++)
      for (let x = 185; x < 205; x++) striped.data.set(Math.floor(y / 3) % 2 === 0 ? skinColour : [60, 60, 60], (y * W + x) * 3);
    const model = skinModel(striped, wearer);
    assert.ok(model && isSkin(model, skinColour[0]!, skinColour[1]!, skinColour[2]!), 'the light stripes look like skin');
    const { layer, at } = blocks(150, 250, 200, 220, (x) => (x < 190 ? 'red' : x >= 200 ? 'blue' : false));
    closeGaps(layer, striped, wearer, model, unit);
    for (let y = 204; y < 216; y++) for (let x = 190; x < 200; x++) assert.equal(at(x, y).alpha, 1, `(${x}, ${y}) is closed`);
  });

  test('a gap over bare skin or the wall, or wider than a garment gap, stays open', () => {
    // The forearm (skin, with wall beside it) between two pieces at y = 290, around x = 281.
    const arm = blocks(250, 320, 285, 295, (x) => (x < 266 || x >= 296 ? 'red' : false));
    closeGaps(arm.layer, image, person, skin, unit);
    assert.equal(arm.at(281, 290).alpha, 0, 'the forearm');
    // 30 px over the old top, with a shoulder width of 100 px: wider than a gap inside one garment.
    const wide = blocks(150, 250, 200, 220, (x) => (x < 180 || x >= 210 ? 'red' : false));
    closeGaps(wide.layer, image, person, skin, unit);
    assert.equal(wide.at(195, 210).alpha, 0);
  });

  test('old clothing between the body’s edge and a hanging arm is covered; towards the wall it is not', () => {
    const { image: drawn, person: wearer } = syntheticPerson();
    // Rows 262–300, more than a quarter of a shoulder width: the old top reaches from the torso's side to the
    // forearm's inner edge (x ≈ 270).
    for (let y = 262; y < 300; y++)
      for (let x = 246; wearer.matte.data[y * W + x] === 0; x++)
        paintPatch(drawn, wearer, { x0: x, x1: x + 1, y0: y, y1: y + 1 }, OLD_TOP, REGION.torso);
    // On the other side, rows 290–296 only: a tick, not a strip down the arm.
    for (let y = 290; y < 296; y++)
      for (let x = 154; wearer.matte.data[y * W + x] === 0; x--)
        paintPatch(drawn, wearer, { x0: x, x1: x + 1, y0: y, y1: y + 1 }, OLD_TOP, REGION.torso);
    const model = skinModel(drawn, wearer);
    // The new top's body spans x 146–255, short of the arms (its sleeves ended higher up). At row 205 the old sleeve
    // beyond it ends at the wall.
    const { layer, at } = blocks(100, 300, 200, 300, (x) => (x >= 146 && x < 256 ? 'red' : false));
    closeGaps(layer, drawn, wearer, model, unit);
    for (let x = 256; x < 266; x++) assert.deepEqual(at(x, 290), { alpha: 1, rgb: [255, 0, 0] }, `(${x}, 290) is covered`);
    assert.equal(at(281, 290).alpha, 0, 'the forearm stays bare');
    assert.equal(at(260, 205).alpha, 0, 'an old sleeve that ends at the wall stays');
    assert.equal(at(140, 293).alpha, 0, 'a strip six rows high stays');
  });

  test('a shorter strip between the body and a hanging arm is covered where it is thin; a block as short is not', () => {
    // Rows 268–290, a fifth of a shoulder width: the old top reaches from the torso's side to the forearm (x ≈ 270).
    const strip = (bodyEnd: number) => {
      const { image: drawn, person: wearer } = syntheticPerson();
      for (let y = 268; y < 290; y++)
        for (let x = 246; wearer.matte.data[y * W + x] === 0; x++)
          paintPatch(drawn, wearer, { x0: x, x1: x + 1, y0: y, y1: y + 1 }, OLD_TOP, REGION.torso);
      const { layer, at } = blocks(100, 300, 200, 300, (x) => (x >= 146 && x < bodyEnd ? 'red' : false));
      closeGaps(layer, drawn, wearer, skinModel(drawn, wearer), unit);
      return at;
    };
    // The new top's body reaches x 266: the strip is 4 or 5 pixels wide, under a quarter of its height.
    const thin = strip(266);
    for (let x = 266; x < 269; x++) assert.equal(thin(x, 280).alpha, 1, `(${x}, 280) is covered`);
    // It reaches x 256: 14 pixels wide, two thirds of its height.
    assert.equal(strip(256)(260, 280).alpha, 0, 'a short wide block stays');
  });

  test('the wall seen between the body and a hanging arm, inside the person’s matte, is a gap left open', () => {
    const { image: drawn, person: wearer } = syntheticPerson();
    // As above, but the matte takes in the wall between the old top (to x 257) and the forearm (from x ≈ 270).
    for (let y = 262; y < 300; y++)
      for (let x = 246; wearer.matte.data[y * W + x] === 0; x++)
        paintPatch(drawn, wearer, { x0: x, x1: x + 1, y0: y, y1: y + 1 }, x < 258 ? OLD_TOP : WALL, REGION.torso);
    const model = skinModel(drawn, wearer);
    const { layer, at } = blocks(100, 300, 200, 300, (x) => (x >= 146 && x < 252 ? 'red' : false));
    closeGaps(layer, drawn, wearer, model, unit);
    assert.equal(at(263, 290).alpha, 0, 'the wall stays');
    assert.equal(at(254, 290).alpha, 0, 'and so does the old top beside it: the run does not reach the arm');
  });

  test('an old sleeve round the forearm is not taken for the body’s side, though bare skin lies beyond it', () => {
    const { image: drawn, person: wearer } = syntheticPerson();
    // Rows 280–318: an old sleeve covers the forearm from x 270 to 3 pixels past its bone (elbow to wrist); its bare
    // skin lies beyond. The new top's body reaches x 269.
    const bone = (y: number): number => 275 + ((285 - 275) * (y - 240)) / (320 - 240);
    for (let y = 280; y < 318; y++)
      paintPatch(drawn, wearer, { x0: 270, x1: Math.floor(bone(y)) + 4, y0: y, y1: y + 1 }, OLD_TOP, REGION.leftLowerArm);
    const model = skinModel(drawn, wearer);
    const { layer, at } = blocks(150, 320, 200, 340, (x) => (x < 270 ? 'red' : false));
    closeGaps(layer, drawn, wearer, model, unit);
    assert.equal(at(275, 300).alpha, 0, 'the old sleeve stays uncovered');
  });
});

describe('the old waistband above new bottoms', () => {
  /** The drawn person in a red top over the drawn trousers, with new bottoms covering from `from` down. */
  const setting = (top: [number, number, number]) => {
    const { image, person } = syntheticPerson();
    for (let y = 140; y < 310; y++) for (let x = 155; x <= 245; x++) image.data.set(top, (y * W + x) * 3);
    const coverage = new Float32Array(W * H);
    for (let y = 330; y < 560; y++) for (let x = 160; x <= 240; x++) coverage[y * W + x] = 1;
    const out = new Uint8Array(image.data);
    const skin = skinModel(image, person);
    return { image, person, coverage, out, skin, torsoLength: 150 };
  };

  test('becomes the top it was worn with, mirrored at the old waistband', () => {
    const input = setting([200, 60, 60]);
    assert.ok(replaceWaistBand(input) > 0);
    // The old trousers from y 310 to 329 above the new bottoms: now the red top.
    assert.deepEqual([...input.out.subarray((320 * W + 200) * 3, (320 * W + 200) * 3 + 3)], [200, 60, 60]);
    // Below the new waistband and above the old one nothing changes.
    assert.deepEqual([...input.out.subarray((300 * W + 200) * 3, (300 * W + 200) * 3 + 3)], [200, 60, 60]);
    assert.deepEqual([...input.out.subarray((340 * W + 200) * 3, (340 * W + 200) * 3 + 3)], [60, 70, 80]);
  });

  test('its anti-aliased line (between the top’s colour and the trousers’) goes with it, not left as a thin dark line', () => {
    const input = setting([200, 60, 60]);
    // The old waistband's edge, rows 308–309: two rows mixing the red top and the trousers.
    const mixed = [130, 65, 70];
    for (let y = 308; y < 310; y++) for (let x = 160; x <= 240; x++) input.image.data.set(mixed, (y * W + x) * 3);
    input.out.set(input.image.data);
    assert.ok(replaceWaistBand(input) > 0);
    for (const y of [308, 309]) {
      const line = [...input.out.subarray((y * W + 200) * 3, (y * W + 200) * 3 + 3)];
      assert.ok(distanceTo(line, [200, 60, 60]) < 12, `row ${y} became ${line}`);
    }
  });

  test('stays when the top and the old trousers cannot be told apart by colour', () => {
    const input = setting([70, 75, 85]);
    assert.equal(replaceWaistBand(input), 0);
    assert.deepEqual(input.out, new Uint8Array(input.image.data));
  });
});
