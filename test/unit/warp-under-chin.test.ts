/**
 * Below the chin the head's region reaches over the neck and the old top's collar. There only bare skin, the face
 * oval and hair-coloured pixels are the head: an old collar becomes neck skin, and a new top may cover it. Skin in
 * the jaw's shadow is skin, not a collar.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { faceViolation } from '../../server/engines/warp/checks.ts';
import { isShadowedSkin, isSkin, skinModel } from '../../server/engines/warp/composite/colour.ts';
import { compose } from '../../server/engines/warp/composite/compose.ts';
import { bareNeckline, bareUnderChin, chinRow } from '../../server/engines/warp/composite/neckline.ts';
import { boneRegions } from '../../server/vision/body-layout.ts';
import { REGION, type Mask } from '../../server/vision/types.ts';
import { H, OLD_TOP, SKIN, W, WALL, greyLayer, syntheticPerson } from '../helpers/warp-body.ts';

const HAIR: [number, number, number] = [60, 40, 30];
const flat = new Float32Array(W * H).fill(1);
const distance = (a: ArrayLike<number>, b: readonly number[]): number => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
const pixel = (data: Uint8Array, i: number): number[] => [data[i * 3]!, data[i * 3 + 1]!, data[i * 3 + 2]!];

/** Whether every pixel within 2 of pixel i is the person's. */
function inside(matte: Uint8Array, i: number): boolean {
  for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) if (matte[i + dy * W + dx]! < 128) return false;
  return true;
}

/** The drawn person with hair above the eyes and the old top's colour on the head's bone region left of x = 200 below the chin. */
function personWithCollar() {
  const { image, person } = syntheticPerson();
  const chin = chinRow(person);
  const boneRegion = boneRegions(person.landmarks);
  const collar: number[] = [];
  const neck: number[] = [];
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      // The head's region as its bone reaches (at the neck's outline the layout may label a pixel otherwise).
      if (person.layout.labels[i] !== REGION.head || boneRegion(x, y) !== REGION.head) continue;
      // The outline's pixels, within 2 of the wall, mix hair or skin with the wall: not clothing.
      if (y > chin + 2 && !inside(person.matte.data, i)) continue;
      if (y < 60) image.data.set(HAIR, i * 3);
      else if (y > chin + 2 && x < 200) (image.data.set(OLD_TOP, i * 3), collar.push(i));
      else if (y > chin + 2) neck.push(i);
    }
  }
  // Bare skin is skin over an area: the neck's pixels within 2 of the collar or the wall are not bare.
  const bare = (i: number): boolean => {
    for (let dy = -2; dy <= 2; dy++)
      for (let dx = -2; dx <= 2; dx++) if (distance(pixel(image.data, i + dy * W + dx), SKIN) > 0) return false;
    return true;
  };
  return { image, person, chin, collar, neck: neck.filter(bare) };
}

test('an old collar in the head’s region below the chin becomes neck skin; the face above the chin keeps its bytes', () => {
  const { image, person, chin, collar, neck } = personWithCollar();
  assert.ok(collar.length > 40 && neck.length > 40, `${collar.length} collar and ${neck.length} neck pixels drawn`);
  const skin = skinModel(image, person)!;
  const out = Uint8Array.from(image.data);
  const clothing = bareUnderChin({ out, image, person, skin, shading: flat });
  for (const i of collar) {
    assert.equal(clothing[i], 2, `collar pixel ${i} painted`);
    assert.ok(distance(pixel(out, i), SKIN) < 30, `collar pixel ${i} became ${pixel(out, i)}`);
  }
  for (const i of neck) assert.equal(clothing[i], 0, `neck pixel ${i} is skin, not clothing`);
  for (let i = 0; i < (chin + 1) * W; i++) assert.deepEqual(pixel(out, i), pixel(image.data, i), `pixel ${i} above the chin changed`);
});

/** A strand of hair 3 pixels wide from the hair above the eyes, at (200, 56), down to pixel i (long hair falling). */
function strandTo(image: { data: Uint8Array }, matte: Uint8Array, i: number, colour: readonly number[] = HAIR): void {
  const [x1, y1] = [i % W, Math.floor(i / W)];
  const steps = Math.max(1, Math.abs(y1 - 56));
  for (let s = 0; s <= steps; s++) {
    const x = Math.round(200 + ((x1 - 200) * s) / steps);
    const y = Math.round(56 + ((y1 - 56) * s) / steps);
    for (let dx = -1; dx <= 1; dx++) {
      image.data.set(colour, (y * W + x + dx) * 3);
      matte[y * W + x + dx] = 255;
    }
  }
}

test('below the chin, hair-coloured pixels joined to the head’s hair and the face oval keep their bytes', () => {
  const { image, person, collar } = personWithCollar();
  const hairAt = collar.slice(0, 10);
  for (const i of hairAt) image.data.set([70, 48, 36], i * 3);
  strandTo(image, person.matte.data, hairAt[0]!);
  const oval: Mask = { data: new Uint8Array(W * H), width: W, height: H };
  const ovalAt = collar.slice(-10);
  for (const i of ovalAt) oval.data[i] = 255;
  const skin = skinModel(image, person)!;
  const out = Uint8Array.from(image.data);
  const clothing = bareUnderChin({ out, image, person, skin, shading: flat, face: oval });
  for (const i of [...hairAt, ...ovalAt]) {
    assert.equal(clothing[i], 0, `pixel ${i} left as head`);
    assert.deepEqual(pixel(out, i), pixel(image.data, i));
  }
  const unpainted = collar.slice(10, -10).filter((i) => clothing[i] !== 2);
  assert.equal(
    unpainted.length,
    0,
    `the rest of the collar is painted: ${unpainted.map((i) => `${i % W},${Math.floor(i / W)}:${clothing[i]}`).join(' ')}`,
  );
});

test('a new top covers the old collar below the chin, but not the bare neck', () => {
  const { image, person, chin, collar, neck } = personWithCollar();
  const top = greyLayer(140, chin - 5, 120, 200);
  const out = compose({ image, person, layers: [{ layer: top, category: 'top' }] });
  // Inside the collar (its edge beside the bare neck is softened).
  const all = new Set(collar);
  const inside = collar.filter((i) => [-W - 1, -W, -W + 1, -1, 1, W - 1, W, W + 1].every((d) => all.has(i + d)));
  assert.ok(inside.length > 20);
  for (const i of inside) assert.ok(distance(pixel(out, i), [200, 200, 200]) < 40, `collar pixel ${i} is ${pixel(out, i)}, not the top`);
  for (const i of neck) assert.deepEqual(pixel(out, i), pixel(image.data, i), `neck pixel ${i} covered`);
  for (let i = 0; i < (chin + 1) * W; i++)
    if (person.layout.labels[i] === REGION.head)
      assert.deepEqual(pixel(out, i), pixel(image.data, i), `head pixel ${i} above the chin changed`);
});

test('face check: a change in the head’s region below the chin is not a change of the face; above it, it is', () => {
  const { image, person, chin } = personWithCollar();
  const below = Uint8Array.from(image.data);
  const above = Uint8Array.from(image.data);
  for (let i = 0; i < W * H; i++) {
    if (person.layout.labels[i] !== REGION.head) continue;
    if (Math.floor(i / W) > chin) below.fill(90, i * 3, i * 3 + 3);
    else if (Math.floor(i / W) > chin - 15) above.fill(90, i * 3, i * 3 + 3);
  }
  assert.equal(faceViolation(image, below, person), null);
  assert.equal(faceViolation(image, above, person)?.check, 'face');
});

test('skin in the jaw’s shadow is not old clothing: neither painted below the chin nor above a new neckline', () => {
  const { image, person, neck } = personWithCollar();
  const skin = skinModel(image, person)!;
  const shadow = [0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6]
    .map((f) => SKIN.map((c) => Math.round(c * f)) as [number, number, number])
    .find((c) => !isSkin(skin, ...c) && isShadowedSkin(skin, ...c));
  assert.ok(shadow, 'a darker shade of the skin that isSkin does not take');
  const shaded = [...neck];
  // The neck above a collar's height, away from the old top (an edge pixel beside it is not skin over an area).
  for (let y = 132; y < 147; y++) for (let x = 194; x < 207; x++) shaded.push(y * W + x);
  for (const i of shaded) image.data.set(shadow, i * 3);
  const out = Uint8Array.from(image.data);
  const clothing = bareUnderChin({ out, image, person, skin, shading: flat });
  const coverage = new Float32Array(W * H);
  for (let y = 152; y < 300; y++) for (let x = 150; x <= 250; x++) coverage[y * W + x] = 1;
  bareNeckline({ out, image, person, skin, upperCoverage: coverage, shading: flat });
  for (const i of shaded) {
    assert.equal(clothing[i], 0, `shadowed pixel ${i} taken for clothing`);
    assert.deepEqual(pixel(out, i), pixel(image.data, i), `shadowed pixel ${i} painted`);
  }
});

test('a thin skin-coloured line across an old collar (a strand, a seam) is not painted, though a top may cover it', () => {
  const { image, person, collar } = personWithCollar();
  const skin = skinModel(image, person)!;
  const row = Math.floor(collar[Math.floor(collar.length / 2)]! / W);
  const line = collar.filter((i) => Math.floor(i / W) === row);
  assert.ok(line.length > 5);
  for (const i of line) image.data.set(SKIN, i * 3);
  const out = Uint8Array.from(image.data);
  const clothing = bareUnderChin({ out, image, person, skin, shading: flat });
  for (const i of line) {
    assert.equal(clothing[i], 1, `line pixel ${i} is coverable clothing, not painted`);
    assert.deepEqual(pixel(out, i), pixel(image.data, i));
  }
});

test('hair in deep shadow that joins the hair below the chin is hair; a dark collar apart from it is clothing', () => {
  const { image, person, collar } = personWithCollar();
  const skin = skinModel(image, person)!;
  const xs = collar.map((i) => i % W);
  const left = Math.min(...xs);
  const right = Math.max(...xs);
  const third = (right - left) / 3;
  // The collar's left third: a strand of hair, then hair in shadow beside it; its right third a dark collar.
  const strand = collar.filter((i) => i % W === left);
  const shadow = collar.filter((i) => i % W > left && i % W < left + third);
  const dark = collar.filter((i) => i % W > right - third);
  for (const i of strand) image.data.set(HAIR, i * 3);
  strandTo(image, person.matte.data, strand[0]!);
  for (const i of [...shadow, ...dark]) image.data.set([20, 12, 8], i * 3);
  const out = Uint8Array.from(image.data);
  const clothing = bareUnderChin({ out, image, person, skin, shading: flat });
  for (const i of shadow) assert.equal(clothing[i], 0, `shadowed hair pixel ${i} taken for clothing`);
  assert.ok(
    dark.every((i) => clothing[i] === 2),
    'the dark collar apart from the hair is painted',
  );
});

test('a collar in the hair’s colour joined to no hair falling from the head is clothing, painted (short hair)', () => {
  // Black hair above the eyes, and a black neckband.
  const BLACK = [24, 24, 28] as const;
  const blacken = (image: { data: Uint8Array }, collar: number[]): void => {
    for (let i = 0; i < W * H; i++) if (distance(pixel(image.data, i), HAIR) === 0) image.data.set(BLACK, i * 3);
    for (const i of collar) image.data.set(BLACK, i * 3);
  };
  const { image, person, collar } = personWithCollar();
  blacken(image, collar);
  const skin = skinModel(image, person)!;
  const out = Uint8Array.from(image.data);
  const clothing = bareUnderChin({ out, image, person, skin, shading: flat });
  assert.ok(
    collar.every((i) => clothing[i] === 2),
    `${collar.filter((i) => clothing[i] === 2).length} of ${collar.length} collar pixels painted`,
  );
  // Long hair falling onto it from the head is hair.
  const { image: long, person: longPerson, collar: longCollar } = personWithCollar();
  strandTo(long, longPerson.matte.data, longCollar[0]!);
  blacken(long, longCollar);
  const kept = bareUnderChin({ out: Uint8Array.from(long.data), image: long, person: longPerson, skin, shading: flat });
  assert.ok(
    longCollar.every((i) => kept[i] !== 2),
    'hair joined to the head’s is not painted',
  );
});

test('the wall seen through hair below the chin is not clothing, unless the old top is of a colour between them', () => {
  const ORANGE: [number, number, number] = [230, 90, 50];
  // Black hair (brown passes for skin in shadow), and the wall seen through a curl's hole: their colours mixed.
  const BLACK: [number, number, number] = [20, 20, 25];
  const HOLE = [0, 1, 2].map((c) => Math.round((BLACK[c]! + WALL[c]!) / 2)) as [number, number, number];
  const holes = (oldTop: readonly number[]) => {
    const { image, person, collar } = personWithCollar();
    for (let i = 0; i < W * H; i++) {
      const colour = pixel(image.data, i);
      if (distance(colour, HAIR) === 0) image.data.set(BLACK, i * 3);
      else if (person.layout.labels[i] === REGION.torso && distance(colour, OLD_TOP) === 0) image.data.set(oldTop, i * 3);
    }
    // Below the chin, hair where the collar was, with holes in every fourth column.
    const seen: number[] = [];
    for (const i of collar) {
      const hole = (i % W) % 4 === 0;
      image.data.set(hole ? HOLE : BLACK, i * 3);
      if (hole) seen.push(i);
    }
    const skin = skinModel(image, person)!;
    const clothing = bareUnderChin({ out: Uint8Array.from(image.data), image, person, skin, shading: flat });
    return seen.filter((i) => clothing[i] === 2).length / seen.length;
  };
  assert.equal(holes(ORANGE), 0, 'holes in the hair painted over an orange top');
  // A dark blue top's colour lies near the hair's and the wall's mix: the holes cannot be told from it, and are painted.
  const painted = holes(OLD_TOP);
  assert.ok(painted > 0.5, `only ${painted} of the holes painted over a dark blue top`);
});
