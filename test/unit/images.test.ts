import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { ApiError } from '../../server/kernel/errors.ts';
import {
  DEFAULT_IMAGE_LIMITS,
  checkImage,
  decodeImageField,
  normalizeImage,
  prepareImage,
  probeImage,
  sniffFormat,
} from '../../server/images/index.ts';
import { hostileCorpus, validImage, validJpeg } from '../helpers/hostile-images.ts';

const LIMITS = DEFAULT_IMAGE_LIMITS;
const HEADER_CHECK_BUDGET_MS = 50;

function isApiError(code: string, field = 'selfie') {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ApiError, `expected ApiError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.ok(
      error.errors?.some((e) => e.field === field),
      'errors must name the field',
    );
    assert.ok(error.message.includes(field), 'detail must name the field');
    return true;
  };
}

/** A seeded generator so that the fuzz cases are reproducible. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

describe('probeImage', () => {
  const cases = [
    { label: 'JPEG', make: () => validImage('jpeg', 301, 457) },
    { label: 'PNG', make: () => validImage('png', 333, 260) },
    { label: 'WebP lossy (VP8)', make: () => validImage('webp', 299, 401) },
    {
      label: 'WebP lossless (VP8L)',
      make: () =>
        sharp({ create: { width: 517, height: 263, channels: 3, background: '#806040' } })
          .webp({ lossless: true })
          .toBuffer(),
    },
    {
      label: 'WebP with alpha (VP8X)',
      make: () =>
        sharp({ create: { width: 411, height: 389, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 0.5 } } })
          .webp()
          .toBuffer(),
    },
    {
      label: 'progressive JPEG (SOF2)',
      make: async () =>
        sharp(await validJpeg(280, 350))
          .jpeg({ progressive: true })
          .toBuffer(),
    },
  ];
  for (const { label, make } of cases) {
    it(`reads the dimensions of a ${label} like sharp does`, async () => {
      const bytes = await make();
      const meta = await sharp(bytes).metadata();
      const probe = probeImage(bytes);
      assert.ok(probe);
      assert.equal(probe.format, meta.format);
      assert.equal(probe.width, meta.width);
      assert.equal(probe.height, meta.height);
    });
  }

  it('tells the chunk types of WebP apart', async () => {
    const lossless = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#000' } })
      .webp({ lossless: true })
      .toBuffer();
    const alpha = await sharp({ create: { width: 300, height: 300, channels: 4, background: '#0008' } })
      .webp()
      .toBuffer();
    assert.equal(lossless.toString('latin1', 12, 16), 'VP8L');
    assert.equal(alpha.toString('latin1', 12, 16), 'VP8X');
  });

  it('reads EXIF orientation from a JPEG header', async () => {
    const rotated = await sharp(await validJpeg(300, 400))
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toBuffer();
    assert.equal(probeImage(rotated)?.orientation, 6);
    assert.equal(probeImage(await validJpeg(300, 400))?.orientation, undefined);
  });

  it('returns null for unknown formats and headers cut short', async () => {
    const png = await validImage('png', 300, 300);
    assert.equal(probeImage(Buffer.from('GIF89a')), null);
    assert.equal(probeImage(Buffer.alloc(0)), null);
    assert.equal(probeImage(png.subarray(0, 20)), null);
    assert.equal(sniffFormat(png.subarray(0, 8)), 'png');
    assert.equal(probeImage(Buffer.from([0xff, 0xd8, 0xff])), null);
  });

  it('never throws on truncated or mutated headers', async () => {
    const seeds = [
      await validImage('jpeg', 300, 300),
      await sharp(await validJpeg(300, 300))
        .withMetadata({ orientation: 3 })
        .jpeg()
        .toBuffer(),
      await validImage('png', 300, 300),
      await validImage('webp', 300, 300),
    ];
    const next = lcg(42);
    let probed = 0;
    for (const seed of seeds) {
      for (let cut = 0; cut <= 256; cut++) {
        probeImage(seed.subarray(0, cut));
        probed++;
      }
      for (let round = 0; round < 500; round++) {
        const copy = Buffer.from(seed.subarray(0, 2048));
        for (let flips = next() % 8; flips >= 0; flips--) copy[3 + (next() % (copy.length - 3))] = next() & 0xff;
        const probe = probeImage(copy);
        if (probe) assert.ok(Number.isInteger(probe.width) && Number.isInteger(probe.height));
        probed++;
      }
    }
    assert.equal(probed, seeds.length * (257 + 500));
  });
});

describe('decodeImageField', () => {
  const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a]);
  const encoded = bytes.toString('base64');

  it('decodes plain base64 and returns the SHA-256 of the bytes', () => {
    const decoded = decodeImageField(encoded, 'selfie', LIMITS);
    assert.deepEqual(decoded.bytes, bytes);
    assert.equal(decoded.field, 'selfie');
    assert.equal(decoded.sha256, createHash('sha256').update(bytes).digest('hex'));
  });

  it('accepts missing padding, line breaks and a data URL with any label', () => {
    const unpadded = encoded.replace(/=+$/, '');
    assert.notEqual(unpadded, encoded);
    assert.deepEqual(decodeImageField(unpadded, 'selfie', LIMITS).bytes, bytes);
    assert.deepEqual(decodeImageField(`${encoded.slice(0, 4)}\r\n ${encoded.slice(4)}\n`, 'selfie', LIMITS).bytes, bytes);
    assert.deepEqual(decodeImageField(`data:image/gif;name=x.gif;base64,${encoded}`, 'selfie', LIMITS).bytes, bytes);
    assert.deepEqual(decodeImageField(`DATA:image/png;BASE64,${encoded}`, 'selfie', LIMITS).bytes, bytes);
  });

  it('refuses values that are not strings', () => {
    for (const value of [undefined, null, 42, {}, [encoded], Buffer.from(encoded)]) {
      assert.throws(() => decodeImageField(value, 'items[1]', LIMITS), isApiError('invalid_image', 'items[1]'));
    }
  });

  it('refuses invalid base64 that Buffer.from would silently accept', () => {
    const bad = [
      `${encoded.slice(0, 4)}!${encoded.slice(4)}`,
      encoded.replace(/\+|\//g, '-').replace(/^(.)/, '_'),
      'QUJD=RA==',
      'QUJDR',
      'QUJDRA=',
      'QUJDRA===',
      '====',
      'data:image/png,QUJD',
      'data:image/png;base64',
      '   \n\t ',
    ];
    for (const value of bad) {
      assert.throws(() => decodeImageField(value, 'selfie', LIMITS), isApiError('invalid_image'), JSON.stringify(value));
    }
  });

  it('never echoes the input in its messages', () => {
    const value = `SECRETSECRET*${'Q'.repeat(40)}`;
    try {
      decodeImageField(value, 'selfie', LIMITS);
      assert.fail('should have thrown');
    } catch (error) {
      assert.ok(error instanceof ApiError);
      assert.ok(!error.message.includes('SECRET'));
      assert.ok(!JSON.stringify(error.errors).includes('SECRET'));
    }
  });

  it('checks the byte cap on the encoded length before decoding', () => {
    const limits = { ...LIMITS, maxBytes: 30 };
    assert.doesNotThrow(() => decodeImageField(Buffer.alloc(30, 1).toString('base64'), 'selfie', limits));
    assert.throws(() => decodeImageField(Buffer.alloc(31, 1).toString('base64'), 'selfie', limits), isApiError('payload_too_large'));
    // Invalid characters past the cap: refused as too large, so nothing was scanned or decoded.
    assert.throws(() => decodeImageField('*'.repeat(10_000), 'selfie', limits), isApiError('payload_too_large'));
  });
});

describe('checkImage', () => {
  it('refuses a 30000×30000 PNG bomb from its header, without sharp', async () => {
    const bomb = (await hostileCorpus()).find((c) => c.name.startsWith('PNG bomb'));
    assert.ok(bomb);
    const decoded = decodeImageField(bomb.value, 'selfie', LIMITS);
    assert.ok(decoded.bytes.length < 64 * 1024, 'the bomb is small on the wire');
    const started = performance.now();
    assert.throws(
      () => checkImage(decoded, LIMITS),
      (error: unknown) => {
        assert.ok(error instanceof ApiError && error.code === 'invalid_image');
        assert.match(error.message, /30000×30000/);
        assert.match(error.message, /40 megapixels/);
        return true;
      },
    );
    // checkImage is synchronous, so it cannot have handed the pixels to sharp.
    assert.ok(performance.now() - started < HEADER_CHECK_BUDGET_MS);
  });

  it('returns the probe of an acceptable image', async () => {
    const decoded = decodeImageField((await validJpeg(256, 300)).toString('base64'), 'selfie', LIMITS);
    assert.deepEqual(checkImage(decoded, LIMITS), { format: 'jpeg', width: 256, height: 300 });
  });

  it('enforces the shortest side and the pixel cap at their edges', async () => {
    const decoded = decodeImageField((await validJpeg(255, 400)).toString('base64'), 'selfie', LIMITS);
    assert.throws(() => checkImage(decoded, LIMITS), isApiError('invalid_image'));
    const ok = decodeImageField((await validJpeg(400, 500)).toString('base64'), 'selfie', LIMITS);
    assert.doesNotThrow(() => checkImage(ok, { ...LIMITS, maxPixels: 200_000 }));
    assert.throws(() => checkImage(ok, { ...LIMITS, maxPixels: 199_999 }), isApiError('invalid_image'));
  });
});

describe('normalizeImage', () => {
  async function normalize(bytes: Buffer) {
    const decoded = decodeImageField(bytes.toString('base64'), 'selfie', LIMITS);
    return normalizeImage(decoded, checkImage(decoded, LIMITS), LIMITS);
  }

  it('applies EXIF orientation 6: dimensions swap, no EXIF left', async () => {
    const input = await sharp(await validJpeg(300, 400))
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toBuffer();
    const out = await normalize(input);
    assert.equal(out.format, 'jpeg');
    assert.equal(out.width, 400);
    assert.equal(out.height, 300);
    const meta = await sharp(out.bytes).metadata();
    assert.equal(meta.width, 400);
    assert.equal(meta.height, 300);
    assert.equal(meta.orientation, undefined);
    assert.equal(meta.exif, undefined);
  });

  for (const format of ['jpeg', 'png', 'webp'] as const) {
    it(`strips EXIF, ICC and XMP from ${format} and keeps the format`, async () => {
      const input = await sharp(await validImage(format, 320, 300))
        .withIccProfile('p3')
        .withExif({ IFD0: { Copyright: 'FR-EXIF-SECRET' } })
        .withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>')
        .toFormat(format)
        .toBuffer();
      const before = await sharp(input).metadata();
      assert.ok(before.icc && before.exif && before.xmp, 'the input carries all three blocks');
      const out = await normalize(input);
      const meta = await sharp(out.bytes).metadata();
      assert.equal(meta.format, format);
      assert.equal(out.format, format);
      assert.deepEqual([meta.width, meta.height], [320, 300]);
      assert.equal(meta.icc, undefined);
      assert.equal(meta.exif, undefined);
      assert.equal(meta.xmp, undefined);
      assert.ok(!out.bytes.includes('FR-EXIF-SECRET'));
    });
  }

  it('refuses a truncated image with a message free of sharp internals', async () => {
    const jpeg = await validJpeg(300, 300);
    const decoded = decodeImageField(jpeg.subarray(0, jpeg.length - 200).toString('base64'), 'items[0]', LIMITS);
    const probe = checkImage(decoded, LIMITS);
    await assert.rejects(normalizeImage(decoded, probe, LIMITS), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, 'invalid_image');
      assert.equal(error.message, 'could not decode items[0]: the image is truncated or corrupt');
      assert.deepEqual(error.errors, [{ field: 'items[0]', message: 'the image is truncated or corrupt' }]);
      return true;
    });
  });

  it('enforces maxPixels inside sharp too, should a probe ever disagree', async () => {
    const decoded = decodeImageField((await validJpeg(300, 300)).toString('base64'), 'selfie', LIMITS);
    const lyingProbe = { format: 'jpeg' as const, width: 10, height: 10 };
    await assert.rejects(normalizeImage(decoded, lyingProbe, { ...LIMITS, maxPixels: 50_000 }), isApiError('invalid_image'));
  });
});

describe('hostile corpus through prepareImage', async () => {
  const corpus = await hostileCorpus();

  it('covers every kind of status', () => {
    assert.deepEqual([...new Set(corpus.map((c) => c.status))].sort(), [0, 413, 415, 422]);
    assert.ok(corpus.length >= 25);
  });

  for (const hostile of corpus) {
    it(`${hostile.name} → ${hostile.status === 0 ? 'accepted' : hostile.code}`, async () => {
      if (hostile.status !== 0) {
        await assert.rejects(prepareImage(hostile.value, 'selfie', LIMITS), (error: unknown) => {
          assert.ok(error instanceof ApiError, String(error));
          assert.equal(error.code, hostile.code, error.message);
          assert.equal(error.status, hostile.status);
          assert.ok(error.errors?.some((e) => e.field === 'selfie'));
          assert.ok(error.message.length < 200, 'no bytes echoed in the detail');
          return true;
        });
        return;
      }
      const { decoded, probe, normalized } = await prepareImage(hostile.value, 'selfie', LIMITS);
      assert.equal(normalized.format, probe.format);
      assert.ok(normalized.width >= LIMITS.minSide && normalized.height >= LIMITS.minSide);
      const meta = await sharp(normalized.bytes).metadata();
      assert.equal(meta.format, probe.format);
      assert.equal(meta.exif, undefined);
      if (hostile.payload !== undefined) {
        assert.ok(decoded.bytes.includes(hostile.payload), 'the payload is in the input');
        assert.ok(!normalized.bytes.includes(hostile.payload), 'the payload is gone after normalization');
      }
    });
  }
});
