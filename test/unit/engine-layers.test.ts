import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layerOf } from '../../server/engines/layers.ts';
import { GARMENT_CATEGORIES } from '../../server/kernel/vocabulary.ts';

test('garments are drawn in the order they are worn: bottoms, dress, top, outerwear; a tucked top before the bottoms', () => {
  const worn = [...GARMENT_CATEGORIES].filter((c) => c !== 'auto').sort((a, b) => layerOf(a) - layerOf(b));
  assert.deepEqual(worn, ['bottom', 'dress', 'top', 'outerwear']);
  assert.equal(layerOf('auto'), layerOf('top'), 'a garment of unknown kind is taken for a top');
  assert.ok(layerOf('top', { tucked: true }) < layerOf('bottom'));
  assert.equal(layerOf('dress', { tucked: true }), layerOf('dress'), 'only a top tucks');
});
