/**
 * The inside back of a flat top, seen through its neck opening above the front neckline (a band, the label), is cut
 * away; an opening that shows no such edge, or only a label's edge just below the top, is left alone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cutInsideBack, frontNeckline } from '../../server/engines/warp/cutout/inside-back.ts';

const W = 200;
const H = 160;
const FRONT: [number, number, number] = [200, 60, 60];
const INSIDE: [number, number, number] = [90, 30, 30];
const LABEL: [number, number, number] = [250, 250, 250];
/** The neck points, where the front neckline meets the top edge (row 20), and the front neckline's depth below it. */
const NECK = { left: 70, right: 130, top: 20, drop: 30 } as const;

/** The front neckline's row at column x: a parabola from one neck point down to NECK.drop at the middle and up. */
const frontRow = (x: number): number => Math.round(NECK.top + NECK.drop * (1 - ((x - 100) / 30) ** 2));

/** A flat top: solid from row 20 down between columns 20 and 180; in the opening, what lies above `edge(x)` is `above`. */
function drawnTop(edge: (x: number) => number, above: readonly number[], label: [number, number, number, number] | null = null) {
  const data = new Uint8Array(W * H * 4);
  for (let y = NECK.top; y < H; y++) {
    for (let x = 20; x < 180; x++) {
      const inOpening = x > NECK.left && x < NECK.right && y < edge(x);
      const inLabel = label !== null && x >= label[0] && x < label[2] && y >= label[1] && y < label[3];
      data.set([...(inLabel ? LABEL : inOpening ? above : FRONT), 255], (y * W + x) * 4);
    }
  }
  const landmarks = { neckLeft: { x: NECK.right, y: NECK.top }, neckRight: { x: NECK.left, y: NECK.top } };
  return { image: { data, width: W, height: H }, landmarks };
}

const alphaAt = (data: Uint8Array, x: number, y: number): number => data[(y * W + x) * 4 + 3]!;

test('the inside back above a front neckline is cut away along the neckline; the front stays', () => {
  const { image, landmarks } = drawnTop(frontRow, INSIDE);
  const neckline = frontNeckline(image, landmarks);
  assert.ok(neckline, 'a front neckline is found');
  for (const [k, row] of neckline.rows.entries()) {
    const x = neckline.x0 + k;
    assert.ok(Math.abs(row - frontRow(x)) <= 2, `at x = ${x} the neckline is at row ${row}, not ${frontRow(x)}`);
  }
  assert.ok(cutInsideBack(image, neckline) > 500);
  assert.equal(alphaAt(image.data, 100, 40), 0, 'the inside back is gone');
  assert.equal(alphaAt(image.data, 100, 55), 255, 'the front below the neckline stays');
  assert.equal(alphaAt(image.data, 40, 25), 255, 'the shoulders stay');
});

test('a label on the inside back goes with it; the front below stays', () => {
  // A white label a quarter of the opening wide: its lower edge is stronger than the neckline's, and may be taken
  // for it, which still cuts the label away.
  const { image, landmarks } = drawnTop(frontRow, INSIDE, [92, 24, 108, 32]);
  const neckline = frontNeckline(image, landmarks);
  assert.ok(neckline, 'a neckline is found');
  cutInsideBack(image, neckline);
  for (const [x, y] of [
    [95, 26],
    [100, 30],
    [105, 28],
  ] as const)
    assert.equal(alphaAt(image.data, x, y), 0, `the label at (${x}, ${y}) is gone`);
  for (let x = 75; x <= 125; x += 5) assert.equal(alphaAt(image.data, x, frontRow(x) + 3), 255, `the front at x = ${x} stays`);
});

test('an opening whose inside looks like the front, with no edge across it, is left alone', () => {
  const { image, landmarks } = drawnTop(frontRow, FRONT);
  assert.equal(frontNeckline(image, landmarks), null);
});

test('a label’s edge just below the top edge, with no neckline below it, is no neckline', () => {
  const { image, landmarks } = drawnTop(frontRow, FRONT, [80, 22, 120, 30]);
  assert.equal(frontNeckline(image, landmarks), null);
});

test('a front neckline is measured from the neck points, not from the back neckline dipping above it', () => {
  // The back's top edge dips 15 rows at the middle (a ghost mannequin's back neckline); the front neckline's 30-row
  // drop below the neck points is then only 15 below the top edge there.
  const { image, landmarks } = drawnTop(frontRow, INSIDE);
  const backRow = (x: number): number => Math.round(NECK.top + 15 * (1 - ((x - 100) / 30) ** 2));
  for (let x = NECK.left + 1; x < NECK.right; x++) for (let y = NECK.top; y < backRow(x); y++) image.data[(y * W + x) * 4 + 3] = 0;
  const neckline = frontNeckline(image, landmarks);
  assert.ok(neckline, 'a front neckline is found');
  const middle = neckline.rows[Math.round(neckline.rows.length / 2)]!;
  assert.ok(Math.abs(middle - frontRow(100)) <= 2, `at the middle the neckline is at row ${middle}, not ${frontRow(100)}`);
});
