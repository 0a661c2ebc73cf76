import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiProblem, plainWords } from '../../renderer/api.ts';

const problem = (status: number, code: string, detail: string) =>
  new ApiProblem(status, { type: '', title: '', status, detail, code, requestId: 'req_1' } as never, 'HTTP');

test('staff read the API’s field names as the things they are, and the server’s own waits and reasons', () => {
  assert.equal(
    plainWords(problem(422, 'validation_failed', 'selfie: is not a JPEG, PNG or WebP image')),
    'The customer photo: is not a JPEG, PNG or WebP image',
  );
  assert.equal(plainWords(problem(422, 'invalid_image', 'items[1]: is smaller than 256 pixels')), 'Garment 2: is smaller than 256 pixels');
  assert.match(plainWords(problem(429, 'rate_limited', 'Too many wrong PINs; try again in 30 seconds.')), /30 seconds/);
  assert.match(
    plainWords(problem(403, 'forbidden', 'Staff signed in with the PIN cannot change this; sign in with the admin key.')),
    /admin key/,
  );
  assert.match(plainWords(problem(503, 'storage_unavailable', 'The appliance could not write…')), /disk is full/);
  assert.match(plainWords(new ApiProblem(0, undefined, 'x')), /cannot be reached/);
});
