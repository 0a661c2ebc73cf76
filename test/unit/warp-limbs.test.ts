/**
 * Skin painted where an old sleeve was takes the arm's shape, light and texture from the bare forearm below it: as wide as
 * an arm of that forearm, not as the sleeve, and lit on the forearm's lit side. What of the sleeve lies outside the
 * arm becomes the wall, skin-coloured specks on it too. Old trousers below a dress's hem stay (a dress over trousers
 * is worn that way; legs painted there were flat tubes); below new bottoms they do not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { skinModel } from '../../server/engines/warp/composite/colour.ts';
import { compose } from '../../server/engines/warp/composite/compose.ts';
import { INSIDE, limbPaint } from '../../server/engines/warp/composite/limbs.ts';
import { POSE, REGION } from '../../server/vision/types.ts';
import { H, OLD_TOP, SKIN, W, WALL, greyLayer, syntheticPerson } from '../helpers/warp-body.ts';

const luma = (p: readonly number[]): number => 0.299 * p[0]! + 0.587 * p[1]! + 0.114 * p[2]!;
const distance = (a: readonly number[], b: readonly number[]): number => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
const pixel = (data: Uint8Array, x: number, y: number): number[] => Array.from(data.subarray((y * W + x) * 3, (y * W + x) * 3 + 3));
/** The forearm's half-width, narrower than the drawn person's (11) so that the sleeve (14) is wider than the arm. */
const FOREARM = 7;
/** How much lighter the forearm's lit side (towards smaller x) is than its middle, and its other side darker. */
const LIGHT = 0.15;
/** A freckle's colour over the skin's around it. */
const FRECKLE = 0.85;

/**
 * The drawn person with a thin bare left forearm, lit from the image's left, below the old top's sleeve; `specks`
 * skin-coloured pixels on that sleeve; the forearm `freckled` when asked.
 */
function personWithThinForearm(specks: readonly [number, number][] = [], freckled = false) {
  const { image, person } = syntheticPerson();
  const elbow = person.landmarks[POSE.leftElbow]!;
  const index = person.landmarks[POSE.leftIndex]!;
  const dx = index.x - elbow.x;
  const dy = index.y - elbow.y;
  const length = Math.hypot(dx, dy);
  for (let y = Math.floor(elbow.y) + 1; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (image.data[i * 3] !== SKIN[0] || image.data[i * 3 + 1] !== SKIN[1] || x < 240) continue;
      const t = ((x - elbow.x) * dx + (y - elbow.y) * dy) / (length * length);
      if (t < 0 || t > 1) continue;
      // Signed distance from the forearm's axis, negative towards smaller x.
      const side = ((x - elbow.x) * dy - (y - elbow.y) * dx) / length;
      const across = side / FOREARM;
      if (Math.abs(side) > FOREARM) {
        image.data.set(WALL, i * 3);
        person.matte.data[i] = 0;
      } else {
        // Freckles, when asked: every fifth pixel on diagonals a shade darker.
        const freckle = freckled && (x + 2 * y) % 5 === 0 ? FRECKLE : 1;
        image.data.set(
          SKIN.map((c) => Math.round(c * (1 - LIGHT * across) * freckle)),
          i * 3,
        );
      }
    }
  }
  for (const [x, y] of specks) image.data.set(SKIN, (y * W + x) * 3);
  return { image, person };
}

/** The left upper arm's axis point at `t` from shoulder to elbow, and its unit normal towards greater x. */
function upperArm(person: ReturnType<typeof syntheticPerson>['person'], t: number) {
  const s = person.landmarks[POSE.leftShoulder]!;
  const e = person.landmarks[POSE.leftElbow]!;
  const length = Math.hypot(e.x - s.x, e.y - s.y);
  const normal = { x: (e.y - s.y) / length, y: -(e.x - s.x) / length };
  if (normal.x < 0) [normal.x, normal.y] = [-normal.x, -normal.y];
  return { x: s.x + t * (e.x - s.x), y: s.y + t * (e.y - s.y), normal };
}

/** The result of a sleeveless new top over the torso. */
/** The limbs' paint of the drawn person with the old top's short sleeves painted as skin: arms bare from the shoulders. */
function bareArmed() {
  const bare = syntheticPerson();
  for (let i = 0; i < W * H; i++) {
    const label = bare.person.layout.labels[i]!;
    if ((label === REGION.leftUpperArm || label === REGION.rightUpperArm) && bare.image.data[i * 3] === OLD_TOP[0])
      bare.image.data.set(SKIN, i * 3);
  }
  return limbPaint(bare.image, bare.person, skinModel(bare.image, bare.person)!, 0.8);
}

function dressed(image: ReturnType<typeof syntheticPerson>['image'], person: ReturnType<typeof syntheticPerson>['person']) {
  const layer = { layer: greyLayer(155, 140, 91, 170), category: 'top' as const };
  return compose({ image, person, layers: [layer], skin: skinModel(image, person) });
}

test('a painted upper arm is lit on the side its bare forearm is lit', () => {
  const { image, person } = personWithThinForearm();
  const out = dressed(image, person);
  for (const t of [0.4, 0.6, 0.8]) {
    const axis = upperArm(person, t);
    const at = (d: number) => pixel(out, Math.round(axis.x + d * axis.normal.x), Math.round(axis.y + d * axis.normal.y));
    const [lit, shaded] = [at(-4), at(4)];
    assert.ok(distance(pixel(image.data, Math.round(axis.x), Math.round(axis.y)), OLD_TOP) < 1, 'the old sleeve was there');
    assert.ok(luma(lit) - luma(shaded) > 8, `at t = ${t} the lit side is ${lit}, the other ${shaded}`);
    assert.ok(distance(at(0), SKIN) < 30, `at t = ${t} the arm's middle is ${at(0)}, not the forearm's colour`);
  }
});

test('a painted upper arm carries its bare forearm’s texture, not a flat colour', () => {
  const { image, person } = personWithThinForearm([], true);
  const out = dressed(image, person);
  const lumas: number[] = [];
  for (let t = 0.3; t <= 0.9; t += 0.01) {
    const axis = upperArm(person, t);
    for (const d of [-2, 0, 2])
      lumas.push(luma(pixel(out, Math.round(axis.x + d * axis.normal.x), Math.round(axis.y + d * axis.normal.y))));
  }
  const median = [...lumas].sort((a, b) => a - b)[lumas.length >> 1]!;
  const freckles = lumas.filter((l) => l < median * 0.93).length / lumas.length;
  // A fifth of the forearm is freckled; a flat or smoothly lit paint has none.
  assert.ok(freckles > 0.08 && freckles < 0.4, `${(freckles * 100).toFixed(0)} % of the painted upper arm is freckled`);
});

test('a striped long sleeve painted as skin does not carry its stripes', () => {
  const { image, person } = syntheticPerson();
  // Long sleeves down to the wrists, striped across the arm: a light stripe every 6 rows on the old top's colour.
  const LIGHT_STRIPE = [200, 200, 215];
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (person.layout.labels[i] !== REGION.leftUpperArm && person.layout.labels[i] !== REGION.leftLowerArm) continue;
      if (person.matte.data[i]! < 128) continue;
      image.data.set(y % 6 < 3 ? OLD_TOP : LIGHT_STRIPE, i * 3);
    }
  }
  const out = dressed(image, person);
  const lumas: number[] = [];
  for (let t = 0.3; t <= 0.9; t += 0.01) {
    const axis = upperArm(person, t);
    lumas.push(luma(pixel(out, Math.round(axis.x), Math.round(axis.y))));
  }
  const mean = lumas.reduce((a, b) => a + b, 0) / lumas.length;
  const spread = Math.sqrt(lumas.reduce((a, l) => a + (l - mean) ** 2, 0) / lumas.length);
  assert.ok(spread < 2, `the painted arm's luminance along its axis varies by ${spread.toFixed(1)} (stripes)`);
});

test('skin seen through a crochet sleeve’s holes does not dot the painted arm', () => {
  // The old sleeve with holes: single pixels of skin, a shade darker in the holes' shadow, every 4 pixels.
  const HOLE = SKIN.map((c) => Math.round(c * 0.85));
  const { image, person } = personWithThinForearm();
  const holes: number[] = [];
  for (const t of [0.35, 0.45, 0.55, 0.65, 0.75]) {
    const axis = upperArm(person, t);
    for (const d of [-4, 0, 4]) {
      const i = Math.round(axis.y + d * axis.normal.y) * W + Math.round(axis.x + d * axis.normal.x);
      assert.ok(distance(pixel(image.data, i % W, Math.floor(i / W)), OLD_TOP) < 1, 'a hole in the old sleeve');
      image.data.set(HOLE, i * 3);
      holes.push(i);
    }
  }
  const out = dressed(image, person);
  for (const i of holes) {
    const [x, y] = [i % W, Math.floor(i / W)];
    assert.ok(distance(pixel(out, x, y), HOLE) > 8, `the hole at (${x}, ${y}) kept its own colour ${pixel(out, x, y)}`);
    assert.ok(distance(pixel(out, x, y), pixel(out, x, y + 2)) < 12, `the hole at (${x}, ${y}) stands out from the arm around it`);
  }
});

test('the old sleeve beyond the arm’s width becomes the wall, skin-coloured specks on it too', () => {
  const specks: [number, number][] = [];
  const { person: plain } = syntheticPerson();
  for (const t of [0.7, 0.8]) {
    const axis = upperArm(plain, t);
    specks.push([Math.round(axis.x + 12.5 * axis.normal.x), Math.round(axis.y + 12.5 * axis.normal.y)]);
  }
  const { image, person } = personWithThinForearm(specks);
  const out = dressed(image, person);
  for (const t of [0.65, 0.75, 0.85]) {
    const axis = upperArm(person, t);
    for (const d of [-12, 12]) {
      const x = Math.round(axis.x + d * axis.normal.x);
      const y = Math.round(axis.y + d * axis.normal.y);
      assert.ok(distance(pixel(image.data, x, y), OLD_TOP) < 1, `(${x}, ${y}) was the old sleeve`);
      assert.ok(distance(pixel(out, x, y), WALL) < 25, `the sleeve at (${x}, ${y}), ${d} from the axis, became ${pixel(out, x, y)}`);
    }
  }
  for (const [x, y] of specks) assert.ok(distance(pixel(out, x, y), WALL) < 25, `the speck at (${x}, ${y}) became ${pixel(out, x, y)}`);
});

test('a painted arm’s edge against the wall is anti-aliased, not a staircase', () => {
  const { image, person } = personWithThinForearm();
  const out = dressed(image, person);
  for (const t of [0.5, 0.7]) {
    const axis = upperArm(person, t);
    const at = (d: number) => pixel(out, Math.round(axis.x + d * axis.normal.x), Math.round(axis.y + d * axis.normal.y));
    // Outwards from the axis on both sides: painted skin, then at the edge at least one pixel between it and the wall.
    for (const sign of [-1, 1]) {
      const inner = luma(at(sign * 3));
      const lumas = Array.from({ length: 12 }, (_, d) => luma(at(sign * (4 + d))));
      const mixed = lumas.filter((l) => l > inner + 8 && l < luma(WALL) - 8);
      assert.ok(mixed.length >= 1, `at t = ${t}, side ${sign}: ${inner.toFixed(0)} then ${lumas.map((l) => l.toFixed(0))}`);
    }
  }
});

test('a dress leaves old trousers below its hem as they are; new bottoms over the hips do not', () => {
  const { image, person } = syntheticPerson();
  const TROUSERS = [60, 70, 80];
  // A dress to just above the knees (420): the drawn trouser legs (x 160–240) show below its hem from y 380.
  const dress = { layer: greyLayer(150, 140, 100, 240), category: 'dress' as const };
  const out = compose({ image, person, layers: [dress], skin: skinModel(image, person) });
  // Hips-high shorts the same length, for contrast: the trouser legs below them are replaced (skin or wall).
  const shorts = { layer: greyLayer(150, 300, 100, 80), category: 'bottom' as const };
  const bare = compose({ image, person, layers: [shorts], skin: skinModel(image, person) });
  for (const [x, y] of [
    [170, 450],
    [230, 450],
    [175, 520],
    [225, 520],
  ] as const) {
    assert.ok(distance(pixel(image.data, x, y), TROUSERS) < 1, `(${x}, ${y}) is on the old trousers`);
    assert.deepEqual(pixel(out, x, y), TROUSERS, `below the dress (${x}, ${y}) became ${pixel(out, x, y)}`);
    assert.ok(distance(pixel(bare, x, y), TROUSERS) > 40, `below the shorts (${x}, ${y}) stayed ${pixel(bare, x, y)}`);
  }
});

test('an old sleeve ends where the arm turns bare across: at the drawn person’s elbows; none on bare arms', () => {
  const { image, person } = syntheticPerson();
  // The drawn person's old top has sleeves drawn 14 pixels round the upper arms' bones, so they end 14 pixels down
  // the forearms from the elbows (275, 240) and (125, 240), towards the wrists (285, 320) and (115, 320).
  const limbs = limbPaint(image, person, skinModel(image, person)!, 0.8);
  for (const [arm, sign] of [
    [0, 1],
    [1, -1],
  ] as const) {
    const [dx, dy] = [(sign * 10) / Math.hypot(10, 80), 80 / Math.hypot(10, 80)];
    const cuff = { x: 200 + sign * 75 + 14 * dx, y: 240 + 14 * dy };
    const end = limbs.sleeveEnd(arm);
    assert.ok(
      end && Math.hypot(end.x - cuff.x, end.y - cuff.y) < 5,
      `arm ${arm}: the sleeve ends at ${JSON.stringify(end)}, drawn to ${JSON.stringify(cuff)}`,
    );
  }
  // Bare arms from the shoulders: no old sleeve.
  const bareLimbs = bareArmed();
  assert.equal(bareLimbs.sleeveEnd(0), null);
  assert.equal(bareLimbs.sleeveEnd(1), null);
});

test('a painted arm is as wide on either side of the elbow, wherever the layout puts the border between its regions', () => {
  const { image, person } = syntheticPerson();
  // The layout's border between the left upper and lower arm moved 10 rows below the elbow (275, 240).
  const labels = Uint8Array.from(person.layout.labels);
  for (let y = 240; y < 250; y++)
    for (let x = 0; x < W; x++) if (labels[y * W + x] === REGION.leftLowerArm) labels[y * W + x] = REGION.leftUpperArm;
  const moved = { ...person, layout: { ...person.layout, labels } };
  const limbs = limbPaint(image, moved, skinModel(image, moved)!, 0.8);
  // The shape's width in each row from 10 above the elbow to 20 below it (the arm runs nearly straight down there).
  const widths: number[] = [];
  for (let y = 230; y < 260; y++) {
    let inside = 0;
    for (let x = 240; x < 320; x++) if (limbs.shape[y * W + x] === INSIDE) inside++;
    widths.push(inside);
  }
  for (let k = 1; k < widths.length; k++)
    assert.ok(Math.abs(widths[k]! - widths[k - 1]!) <= 2, `the arm's width jumps from ${widths[k - 1]} to ${widths[k]} at row ${230 + k}`);
});

test('an arm painted with no bare skin to copy is rounded across its own width: darker towards its edges', () => {
  const { image, person } = syntheticPerson();
  // Long sleeves down to the wrists: no bare arm skin anywhere.
  for (let i = 0; i < W * H; i++) {
    const label = person.layout.labels[i]!;
    const arm =
      label === REGION.leftUpperArm || label === REGION.leftLowerArm || label === REGION.rightUpperArm || label === REGION.rightLowerArm;
    if (arm && image.data[i * 3] === SKIN[0] && image.data[i * 3 + 1] === SKIN[1]) image.data.set(OLD_TOP, i * 3);
  }
  const out = compose({ image, person, layers: [{ layer: greyLayer(160, 150, 80, 150), category: 'top' }] });
  // Across the left upper arm halfway down, from the shoulder (250, 150) to the elbow (275, 240).
  const [dx, dy] = [25 / Math.hypot(25, 90), 90 / Math.hypot(25, 90)];
  const at = (off: number): number[] => pixel(out, Math.round(262.5 + off * dy), Math.round(195 - off * dx));
  const middle = luma(at(0));
  assert.ok(distance(at(0), OLD_TOP) > 100, `the arm is painted: ${at(0)}`);
  // The arm is about 10 pixels either side of its axis here.
  for (const off of [-9, 9])
    assert.ok(
      luma(at(off)) < 0.9 * middle,
      `near the edge (${off}) ${luma(at(off)).toFixed(0)} against ${middle.toFixed(0)} in the middle`,
    );
});

test('an old sleeve’s hem cut at a slant goes with the sleeve, though the arm is mostly bare across there', () => {
  const { image, person } = syntheticPerson();
  // The drawn person's left sleeve ends about 14 pixels down the forearm from the elbow (275, 240), near row 254. Its
  // outer side reaches 4 rows further: the outer third of the arm's width (the drawn arm is 11 pixels either side of
  // its bone), past the row where most of the arm is bare again.
  const slant: number[] = [];
  for (let y = 255; y < 259; y++) {
    const axis = 275 + ((y - 240) * 10) / 80;
    for (let x = Math.ceil(axis + 4); x <= Math.floor(axis + 10); x++) {
      image.data.set(OLD_TOP, (y * W + x) * 3);
      slant.push(y * W + x);
    }
  }
  const out = compose({ image, person, layers: [{ layer: greyLayer(160, 150, 80, 150), category: 'top' }] });
  const left = slant.filter((i) => distance(Array.from(out.subarray(i * 3, i * 3 + 3)), OLD_TOP) < 30);
  assert.equal(left.length, 0, `${left.length} of the slanted hem's ${slant.length} pixels stay`);
});

test('an arm wears a sleeve when the old top covers it from the shoulder; a bare arm or one out of sight does not', () => {
  const { image, person } = syntheticPerson();
  // The drawn person's old top has sleeves down to the elbows.
  const limbs = limbPaint(image, person, skinModel(image, person)!, 0.8);
  assert.equal(limbs.sleeved(0), true);
  assert.equal(limbs.sleeved(1), true);
  // Bare from the shoulders on the wearer's left; the right arm out of sight (the layout has no right arm).
  const other = syntheticPerson();
  for (let i = 0; i < W * H; i++) {
    const label = other.person.layout.labels[i]!;
    if (label === REGION.leftUpperArm && other.image.data[i * 3] === OLD_TOP[0]) other.image.data.set(SKIN, i * 3);
    if (label === REGION.rightUpperArm || label === REGION.rightLowerArm) other.person.layout.labels[i] = REGION.background;
  }
  const otherLimbs = limbPaint(other.image, other.person, skinModel(other.image, other.person)!, 0.8);
  assert.equal(otherLimbs.sleeved(0), false, 'a bare arm');
  assert.equal(otherLimbs.sleeved(1), false, 'an arm out of sight');
});

test('a long sleeve’s end, for a new sleeve to reach, is at the wrist; a short one’s where the arm turns bare', () => {
  // The drawn person's old top has sleeves down to the elbows: they end where sleeveEnd finds.
  const { image, person } = syntheticPerson();
  const short = limbPaint(image, person, skinModel(image, person)!, 0.8);
  for (const arm of [0, 1]) assert.deepEqual(short.oldSleeveEnd(arm), short.sleeveEnd(arm));
  // Sleeves down over the forearms to the hands: no bare stretch, so the sleeve ends at the wrist.
  const long = syntheticPerson();
  for (let i = 0; i < W * H; i++) {
    const label = long.person.layout.labels[i]!;
    if ((label === REGION.leftLowerArm || label === REGION.rightLowerArm) && long.person.matte.data[i]! >= 128)
      long.image.data.set(OLD_TOP, i * 3);
  }
  const longLimbs = limbPaint(long.image, long.person, skinModel(long.image, long.person)!, 0.8);
  for (const [arm, wrist] of [
    [0, POSE.leftWrist],
    [1, POSE.rightWrist],
  ] as const) {
    assert.equal(longLimbs.sleeveEnd(arm), null, 'the arm never turns bare');
    const { x, y } = long.person.landmarks[wrist]!;
    assert.deepEqual(longLimbs.oldSleeveEnd(arm), { x, y });
  }
  // Bare arms: none.
  const bareLimbs = bareArmed();
  assert.equal(bareLimbs.oldSleeveEnd(0), null);
  assert.equal(bareLimbs.oldSleeveEnd(1), null);
});

test('under a garment worn over long sleeves the old sleeve stays below its sleeve; above its end it goes as before', () => {
  const { image, person } = syntheticPerson();
  const shoulder = person.landmarks[POSE.leftShoulder]!;
  const elbow = person.landmarks[POSE.leftElbow]!;
  // A short sleeve down the left upper arm to 0.4 of its length, 8 pixels round its bone (the old one is 14), drawn
  // along the arm.
  const sleeve = greyLayer(230, 135, 60, 70, { sleeve: true });
  sleeve.tube = new Uint8Array(60 * 70);
  const [ex, ey] = [shoulder.x + 0.4 * (elbow.x - shoulder.x), shoulder.y + 0.4 * (elbow.y - shoulder.y)];
  for (let y = 0; y < 70; y++) {
    for (let x = 0; x < 60; x++) {
      const [px, py] = [230 + x + 0.5, 135 + y + 0.5];
      const t = Math.max(
        0,
        Math.min(
          1,
          ((px - shoulder.x) * (ex - shoulder.x) + (py - shoulder.y) * (ey - shoulder.y)) /
            ((ex - shoulder.x) ** 2 + (ey - shoulder.y) ** 2),
        ),
      );
      const d = Math.hypot(px - (shoulder.x + t * (ex - shoulder.x)), py - (shoulder.y + t * (ey - shoulder.y)));
      sleeve.alpha[y * 60 + x] = d <= 8 ? 1 : 0;
      sleeve.tube[y * 60 + x] = d <= 8 ? 1 : 0;
    }
  }
  const body = greyLayer(155, 140, 91, 170);
  const dressedOver = (overSleeves: boolean) =>
    compose({
      image,
      person,
      layers: [
        { layer: body, category: 'top', overSleeves },
        { layer: sleeve, category: 'top', overSleeves },
      ],
      skin: skinModel(image, person),
    });
  const [kept, painted] = [dressedOver(true), dressedOver(false)];
  // Three quarters down the upper arm, on its bone and beside it: the old sleeve, below the new one's end.
  for (const d of [0, 8]) {
    const axis = upperArm(person, 0.75);
    const [x, y] = [Math.round(axis.x + d * axis.normal.x), Math.round(axis.y + d * axis.normal.y)];
    assert.ok(distance(pixel(image.data, x, y), OLD_TOP) < 1, `(${x}, ${y}) was the old sleeve`);
    assert.deepEqual(pixel(kept, x, y), pixel(image.data, x, y), `kept below the new sleeve at (${x}, ${y})`);
    assert.ok(distance(pixel(painted, x, y), OLD_TOP) > 40, `replacing it, (${x}, ${y}) is painted: ${pixel(painted, x, y)}`);
  }
  // Beside the narrower new sleeve, above its end, the old sleeve goes either way (an old shoulder standing out of
  // a new one).
  const axis = upperArm(person, 0.25);
  const [x, y] = [Math.round(axis.x + 11 * axis.normal.x), Math.round(axis.y + 11 * axis.normal.y)];
  assert.ok(distance(pixel(image.data, x, y), OLD_TOP) < 1, `(${x}, ${y}) was the old sleeve`);
  assert.ok(distance(pixel(kept, x, y), OLD_TOP) > 40, `beside the new sleeve (${x}, ${y}) is ${pixel(kept, x, y)}`);
});
