import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactPaths } from '../../server/kernel/redact.ts';

test('absolute paths are cut to their last two parts; URLs, fractions and API paths stay', () => {
  assert.equal(
    redactPaths(
      '/srv/shop/models/fashn-vton-1.5/model.safetensors is missing; get it from https://huggingface.co/fashn-ai/x into /srv/shop/models',
    ),
    '…/fashn-vton-1.5/model.safetensors is missing; get it from https://huggingface.co/fashn-ai/x into …/shop/models',
  );
  assert.equal(redactPaths("open 'C:\\Users\\shop\\fittingroom\\models\\u2netp.onnx'"), "open '…/models/u2netp.onnx'");
  assert.equal(redactPaths('(/home/till/data/state.json)'), '(…/data/state.json)');
  for (const kept of ['a 3/4 sleeve', 'see /api/v1/engines for more', 'GET /health', 'size W32/L34']) assert.equal(redactPaths(kept), kept);
});
