/**
 * The heuristic body layout's head: the face and the jaw beside it, not the collar and shoulders below the chin
 * (a garment must be drawn there; only hair hanging there, by its colour, is the head's).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REGION } from '../../server/vision/types.ts';
import { W, syntheticPerson } from '../helpers/warp-body.ts';

test('below the chin is neck, not head; the face and the jaw beside the mouth stay head', () => {
  // The drawn person: nose (200, 80), mouth (200, 92), so the chin is at (200, 103); the neck is skin from y 110.
  const { person } = syntheticPerson();
  const label = (x: number, y: number): number => person.layout.labels[y * W + x]!;
  assert.equal(label(200, 85), REGION.head, 'the face');
  assert.equal(label(214, 96), REGION.head, 'beside the mouth');
  for (const [x, y] of [
    [208, 112],
    [192, 114],
  ] as const)
    assert.equal(label(x, y), REGION.neck, `(${x}, ${y}) below the chin`);
});
