/**
 * Old clothing above a new top's neckline becomes skin, in a collar's height only, and never where the new
 * garment begins deep down the chest (a camisole: a whole chest would have to be invented). Painted skin is a
 * byte: fair skin brightened by the photo's shading does not wrap around past 255. Old clothing standing above a
 * sleeved top's shoulders beside the neck becomes the wall, not skin patches on the shoulders.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shadedSkin, skinModel } from '../../server/engines/warp/composite/colour.ts';
import { compose } from '../../server/engines/warp/composite/compose.ts';
import { bareNeckline, bareUnderChin, wallAboveShoulders } from '../../server/engines/warp/composite/neckline.ts';
import { HeuristicBodyParser } from '../../server/vision/body-layout.ts';
import { REGION } from '../../server/vision/types.ts';
import { H, OLD_TOP, SKIN, W, WALL, darkEdges, greyLayer, syntheticPerson } from '../helpers/warp-body.ts';

/** The drawn person with an old collar (the old top's colour) round the neck, rows 132–149. */
function personWithCollar() {
  const { image, person } = syntheticPerson();
  for (let y = 132; y < 150; y++) for (let x = 190; x < 210; x++) image.data.set(OLD_TOP, (y * W + x) * 3);
  return { image, person };
}

/** Coverage of a new top that begins at row `top` across the body. */
function topFrom(top: number): Float32Array {
  const coverage = new Float32Array(W * H);
  for (let y = top; y < 300; y++) for (let x = 150; x <= 250; x++) coverage[y * W + x] = 1;
  return coverage;
}

const flat = new Float32Array(W * H).fill(1);
const distance = (a: ArrayLike<number>, b: readonly number[]): number => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);

test('an old collar above a crew neck becomes skin; the head and the rows above a collar’s height do not change', () => {
  const { image, person } = personWithCollar();
  const skin = skinModel(image, person)!;
  const out = Uint8Array.from(image.data);
  const painted = bareNeckline({ out, image, person, skin, upperCoverage: topFrom(152), shading: flat });
  assert.ok(painted > 100, `${painted} pixels painted`);
  const collar = out.subarray((145 * W + 200) * 3, (145 * W + 200) * 3 + 3);
  assert.ok(distance(collar, SKIN) < 30 && distance(collar, OLD_TOP) > 150, `the collar became ${[...collar]}`);
  for (let y = 0; y < 118; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      assert.deepEqual([out[i], out[i + 1], out[i + 2]], [image.data[i], image.data[i + 1], image.data[i + 2]], `(${x}, ${y}) changed`);
    }
  }
});

test('an old collar in the hair’s colour above a crew neck is painted, unless hair falls onto it from the head', () => {
  const BLACK = [24, 24, 28] as const;
  const drawn = (strand: boolean) => {
    const { image, person } = syntheticPerson();
    // Black hair above the eyes, and a black collar round the neck (rows 132–149).
    for (let y = 0; y < 60; y++)
      for (let x = 0; x < W; x++) if (person.layout.labels[y * W + x] === REGION.head) image.data.set(BLACK, (y * W + x) * 3);
    for (let y = 132; y < 150; y++) for (let x = 190; x < 210; x++) image.data.set(BLACK, (y * W + x) * 3);
    // Long hair: a strand from the hair down the face's side and the neck onto the collar.
    if (strand)
      for (let y = 50; y < 150; y++)
        for (let x = 191; x < 194; x++) (image.data.set(BLACK, (y * W + x) * 3), (person.matte.data[y * W + x] = 255));
    const out = Uint8Array.from(image.data);
    const skin = skinModel(image, person)!;
    bareNeckline({ out, image, person, skin, upperCoverage: topFrom(152), shading: flat });
    return out.subarray((145 * W + 200) * 3, (145 * W + 200) * 3 + 3);
  };
  const short = drawn(false);
  assert.ok(distance(short, SKIN) < 30, `the black collar under short hair became ${[...short]}`);
  const long = drawn(true);
  assert.deepEqual([...long], [...BLACK], 'the collar hair falls onto is left');
});

test('above a neckline deep down the chest (a camisole) nothing is painted', () => {
  const { image, person } = personWithCollar();
  const skin = skinModel(image, person)!;
  const out = Uint8Array.from(image.data);
  assert.equal(bareNeckline({ out, image, person, skin, upperCoverage: topFrom(200), shading: flat }), 0);
  assert.deepEqual(out, image.data);
});

test('painted fair skin in bright light stays a byte: 255 at most, never wrapped round to a dark value', () => {
  const fair = { cb: -24, cr: 29, sigma: 5, luma: 200, rgb: [243, 190, 159] as [number, number, number] };
  assert.equal(shadedSkin(fair, 220 / 150, 0), 255);
  assert.ok(Math.abs(shadedSkin(fair, 220 / 150, 1) - 190 * 1.08) < 1e-9);
  assert.ok(Math.abs(shadedSkin(fair, 100 / 150, 2) - 159 * 0.88) < 1e-9, 'shade is floored at 0.88');
});

/**
 * The drawn person with old clothing standing above the shoulders beside the neck, rows 120–139 (a chunky
 * cardigan's shoulders, a collar spread over them); the neck between stays bare.
 */
function personWithHighShoulders() {
  const { image, person } = syntheticPerson();
  for (let y = 120; y < 140; y++) {
    for (let x = 158; x <= 242; x++) {
      if (x >= 188 && x <= 212) continue;
      image.data.set(OLD_TOP, (y * W + x) * 3);
      person.matte.data[y * W + x] = 255;
    }
  }
  // The layout is the person's as the matte now has it.
  return { image, person: { ...person, layout: new HeuristicBodyParser().parse(image, person.landmarks, person.matte) } };
}

/** Where wallAboveShoulders was run: its result, the walled mask and the painted photo. */
function walledAbove(coverage: Float32Array) {
  const { image, person } = personWithHighShoulders();
  const skin = skinModel(image, person)!;
  const out = Uint8Array.from(image.data);
  const underChin = bareUnderChin({ out, image, person, skin, shading: flat });
  const background = new Uint8Array(W * H * 3);
  for (let i = 0; i < W * H; i++) background.set(WALL, i * 3);
  const walled = wallAboveShoulders({ out, image, person, skin, upperCoverage: coverage, background, underChin });
  return { image, out, walled };
}

test('old clothing above a sleeved top’s shoulders beside the neck becomes the wall; the neck stays', () => {
  // A sleeved top: it covers the shoulders from row 145, out past the shoulder joints (x = 150 and 250).
  const coverage = new Float32Array(W * H);
  for (let y = 145; y < 300; y++) for (let x = 140; x <= 260; x++) coverage[y * W + x] = 1;
  const { image, out, walled } = walledAbove(coverage);
  assert.ok(walled, 'something is walled');
  for (const [x, y] of [
    [165, 125],
    [235, 125],
    [170, 136],
  ] as const) {
    const i = y * W + x;
    assert.equal(walled[i], 1, `(${x}, ${y}) walled`);
    assert.ok(distance(out.subarray(i * 3, i * 3 + 3), WALL) < 1, `(${x}, ${y}) became ${[...out.subarray(i * 3, i * 3 + 3)]}`);
  }
  const neck = (130 * W + 200) * 3;
  assert.deepEqual([...out.subarray(neck, neck + 3)], [...image.data.subarray(neck, neck + 3)], 'the neck keeps its bytes');
});

test('beside a camisole’s straps, which leave the shoulders bare, nothing becomes the wall', () => {
  // A camisole: its body from row 200, and two straps up to the shoulders beside the neck.
  const coverage = new Float32Array(W * H);
  for (let y = 145; y < 300; y++)
    for (let x = 150; x <= 250; x++) if (y >= 200 || (x >= 170 && x <= 175) || (x >= 225 && x <= 230)) coverage[y * W + x] = 1;
  assert.equal(walledAbove(coverage).walled, null);
});

test('a top’s inside back stays behind the customer’s bare skin, and covers their old top', () => {
  const { image, person } = syntheticPerson();
  // Bare skin down the chest below the neck (an open collar), on the torso's region.
  for (let y = 150; y < 175; y++) for (let x = 188; x <= 212; x++) image.data.set(SKIN, (y * W + x) * 3);
  assert.equal(person.layout.labels[162 * W + 200], REGION.torso);
  // A top whose inside back (seen through its neck opening) lies over that skin and the old top beside it.
  const layer = greyLayer(170, 150, 60, 30);
  layer.insideBack = new Uint8Array(layer.width * layer.height).fill(1);
  const skin = skinModel(image, person);
  const out = compose({ image, person, layers: [{ layer, category: 'top' }], skin });
  const at = (data: Uint8Array, x: number, y: number): number[] => [...data.subarray((y * W + x) * 3, (y * W + x) * 3 + 3)];
  assert.ok(distance(at(out, 200, 162), SKIN) < 1, `the bare chest at (200, 162) became ${at(out, 200, 162)}`);
  // The layer's grey, shaded by the photo a little.
  assert.ok(distance(at(out, 178, 162), [200, 200, 200]) < 15, `the old top at (178, 162) became ${at(out, 178, 162)}`);
  // Unmarked, the same layer is the top's body there, and covers the skin.
  const plain = compose({ image, person, layers: [{ layer: greyLayer(170, 150, 60, 30), category: 'top' }], skin });
  assert.ok(distance(at(plain, 200, 162), SKIN) > 30, `the unmarked layer left ${at(plain, 200, 162)}`);
});

test('bare skin in front of a top is decided by majority: specks on the neck do not let the top through', () => {
  const { image, person } = syntheticPerson();
  // Specks on the bare neck that are not skin-coloured (a necklace's links, a mole): 2 × 2 pixels every 5.
  const SPECK = [90, 70, 60];
  const specks: [number, number][] = [];
  for (let y = 118; y <= 128; y += 5) {
    for (let x = 195; x <= 203; x += 4) {
      for (const [dx, dy] of [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ] as const) {
        assert.equal(person.layout.labels[(y + dy) * W + x + dx], REGION.neck);
        image.data.set(SPECK, ((y + dy) * W + x + dx) * 3);
        specks.push([x + dx, y + dy]);
      }
    }
  }
  // A top drawn up over the neck (its collar).
  const out = compose({ image, person, layers: [{ layer: greyLayer(180, 110, 40, 40), category: 'top' }], skin: skinModel(image, person) });
  for (const [x, y] of specks) {
    const at = out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3);
    // The speck stays as it was (or becomes neck skin): none of the top's grey mixed in.
    assert.ok(distance(at, SPECK) < 3 || distance(at, SKIN) < 30, `the top shows through the neck at (${x}, ${y}): ${[...at]}`);
  }
});

test('a neckline’s edge over bare skin below the neck is anti-aliased, not a staircase of the layout’s cells', () => {
  const { image, person } = syntheticPerson();
  // Bare skin below the neck, on the torso's region (a deep neckline's opening under a high-necked layer).
  for (let y = 140; y < 175; y++) for (let x = 170; x < 231; x++) image.data.set(SKIN, (y * W + x) * 3);
  const layer = greyLayer(170, 110, 61, 65);
  layer.rgb.fill(40);
  const out = compose({ image, person, layers: [{ layer, category: 'top' }], skin: skinModel(image, person) });
  // Across the neck's rounded lower end, row by row on each side: pixels between the layer's dark and the skin.
  for (let y = 140; y < 156; y++) {
    const row = Array.from({ length: 48 }, (_, k) => out[(y * W + 176 + k) * 3]!);
    const centre = 24;
    const mixed = (from: number, to: number): number => row.slice(from, to).filter((r) => r > 60 && r < 200).length;
    assert.ok(mixed(0, centre) >= 2 && mixed(centre, 48) >= 2, `row ${y}: ${row.join(' ')}`);
  }
});

test('a top cut round the bare neck follows a rounded outline, not the layout’s shelf where the neck widens', () => {
  const { image, person } = syntheticPerson();
  // Bare skin over the neck and below it; a dark layer over all of it.
  for (let y = 110; y < 175; y++) for (let x = 160; x < 241; x++) image.data.set(SKIN, (y * W + x) * 3);
  // The layout's neck is 19 pixels wide down to row 139, then 36 from row 140, narrowing to its lower end.
  assert.notEqual(person.layout.labels[139 * W + 187], REGION.neck);
  assert.equal(person.layout.labels[140 * W + 187], REGION.neck);
  const layer = greyLayer(160, 110, 81, 65);
  layer.rgb.fill(40);
  const out = compose({ image, person, layers: [{ layer, category: 'top' }], skin: skinModel(image, person) });
  // Row by row, where the skin begins on the left: across the shelf it jumped 5 pixels from one row to the next.
  const rows = Array.from({ length: 31 }, (_, k) => 125 + k);
  const { edges, largestStep } = darkEdges(out, rows, 160, 200, (y, x) => y * W + x);
  assert.ok(largestStep <= 3, `the neck's edge by row: ${edges.join(' ')}`);
});

test('the head’s region low over the shoulders meets a garment in a smooth edge, not in the layout’s steps', () => {
  const { image, person } = syntheticPerson();
  const labels = person.layout.labels;
  // Bare skin beside the neck, which the layout gives to the head in steps 8 pixels wide and 6 tall (below halfway
  // from the chin, row 103, to the shoulders, row 150), the rest of it to the torso.
  const step = (x: number): number => 136 + 6 * Math.floor((x - 158) / 8);
  for (let y = 128; y < 176; y++) {
    for (let x = 150; x < 196; x++) {
      image.data.set(SKIN, (y * W + x) * 3);
      labels[y * W + x] = x >= 158 && x < 190 && y < step(x) ? REGION.head : REGION.torso;
    }
  }
  const layer = greyLayer(150, 120, 46, 60);
  layer.rgb.fill(40);
  const out = compose({ image, person, layers: [{ layer, category: 'top' }], skin: skinModel(image, person) });
  // Column by column, the first row from the top that is the layer's dark.
  const columns = Array.from({ length: 28 }, (_, k) => 160 + k);
  const { edges, largestStep } = darkEdges(out, columns, 128, 176, (x, y) => y * W + x);
  assert.ok(largestStep <= 3, `the garment's edge by column: ${edges.join(' ')}`);
  // The face is never smoothed.
  const face = (100 * W + 200) * 3;
  assert.deepEqual([...out.subarray(face, face + 3)], [...image.data.subarray(face, face + 3)]);
});

test('a bare forearm’s edge in front of a garment is anti-aliased too, over its own skin', () => {
  const { image, person } = syntheticPerson();
  // A dark layer over the left forearm (bare, about x 271..293), as a garment's body it hangs in front of.
  const layer = greyLayer(240, 250, 80, 70);
  layer.rgb.fill(40);
  const out = compose({ image, person, layers: [{ layer, category: 'top' }], skin: skinModel(image, person) });
  // Row by row down the forearm, the pixels between the layer's dark and the skin on each side, on average.
  let [left, right] = [0, 0];
  for (let y = 256; y < 316; y++) {
    const row = Array.from({ length: 40 }, (_, k) => out[(y * W + 262 + k) * 3]!);
    const mixed = (from: number, to: number): number => row.slice(from, to).filter((r) => r > 60 && r < 200).length;
    left += mixed(0, 20) / 60;
    right += mixed(20, 40) / 60;
  }
  // Cut at the majority and softened by a pixel, the edge had 1.1 such pixels a row; faded over the arm's skin, more.
  assert.ok(left > 1.2 && right > 1.2, `mixed pixels a row: ${left.toFixed(2)} left, ${right.toFixed(2)} right`);
  // The forearm's middle keeps its bytes.
  const middle = (285 * W + 281) * 3;
  assert.deepEqual([...out.subarray(middle, middle + 3)], [...image.data.subarray(middle, middle + 3)]);
});

test('beside the neck, over the old top, a neckline is cut at the majority: the old collar does not show through a faded edge', () => {
  const { image, person } = syntheticPerson();
  // The drawn old top (navy) meets the bare neck at row 140; a grey layer over both.
  const out = compose({ image, person, layers: [{ layer: greyLayer(180, 110, 40, 40), category: 'top' }], skin: skinModel(image, person) });
  for (const x of [190, 210]) {
    assert.deepEqual([...image.data.subarray((140 * W + x) * 3, (140 * W + x) * 3 + 3)], [...OLD_TOP], `the old top at (${x}, 140)`);
    // The layer's share there: at least the one-pixel feather's two thirds (faded, the navy showed through at 0.44).
    const share = (out[(140 * W + x) * 3]! - OLD_TOP[0]) / (200 - OLD_TOP[0]);
    assert.ok(share > 0.6, `the layer covers ${share.toFixed(2)} of the old top at (${x}, 140)`);
  }
});
