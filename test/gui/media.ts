/**
 * Pictures for the browser tests, made in the test's temporary folder: the
 * fixture photos from ../shared when present (never copied into the repo),
 * otherwise drawn here; and a .y4m clip for Chromium's fake camera.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import sharp, { type Sharp } from 'sharp';

const FIXTURES = resolve(import.meta.dirname, '../../../shared/fixtures');
const PERSON = join(FIXTURES, 'people/viton_00034_00.jpg');
/** Head to thighs with room above the head: the framing guide's "ok". */
const WELL_FRAMED = join(FIXTURES, 'people/generated_model_1.png');
const GARMENT = join(FIXTURES, 'garments/upper_viton_00055_00.jpg');

/** A stand-in person: a figure on a plain background (when ../shared is absent). */
function drawnPerson(width: number, height: number): Sharp {
  const figure = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="#d8d2c8"/>
    <circle cx="${width / 2}" cy="${height * 0.16}" r="${width * 0.09}" fill="#c99a7a"/>
    <rect x="${width * 0.3}" y="${height * 0.26}" width="${width * 0.4}" height="${height * 0.36}" rx="20" fill="#3a5f8f"/>
    <rect x="${width * 0.33}" y="${height * 0.6}" width="${width * 0.14}" height="${height * 0.36}" fill="#333"/>
    <rect x="${width * 0.53}" y="${height * 0.6}" width="${width * 0.14}" height="${height * 0.36}" fill="#333"/>
  </svg>`;
  return sharp(Buffer.from(figure));
}

/** A stand-in garment: a T-shirt shape on white. */
function drawnGarment(): Sharp {
  const shirt = `<svg xmlns="http://www.w3.org/2000/svg" width="384" height="512">
    <rect width="100%" height="100%" fill="#fff"/>
    <path d="M110 80 L160 60 Q192 90 224 60 L274 80 L340 150 L300 190 L280 170 L280 450 L104 450 L104 170 L84 190 L44 150 Z" fill="#c0392b"/>
  </svg>`;
  return sharp(Buffer.from(shirt));
}

/** Whether the real fixture photos are available. */
export const hasFixtures = existsSync(PERSON) && existsSync(GARMENT);

/** A person photo as JPEG bytes, `width`×`height`. */
export async function personJpeg(width = 480, height = 640): Promise<Buffer> {
  const source = hasFixtures ? sharp(PERSON) : drawnPerson(width, height);
  return source.resize(width, height, { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer();
}

/** A person photo framed as the framing guide wants it (the drawn stand-in without ../shared). */
export async function wellFramedPersonJpeg(width = 480, height = 640): Promise<Buffer> {
  const source = hasFixtures && existsSync(WELL_FRAMED) ? sharp(WELL_FRAMED) : drawnPerson(width, height);
  return source.resize(width, height, { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer();
}

/** A garment photo as JPEG bytes. */
export async function garmentJpeg(): Promise<Buffer> {
  const source = hasFixtures ? sharp(GARMENT) : drawnGarment();
  return source.resize(384, 512, { fit: 'contain', background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
}

/**
 * Writes a one-frame YUV4MPEG2 clip (4:2:0, BT.601 full range) of a person
 * photo (personJpeg unless given) for `--use-file-for-fake-video-capture`;
 * Chromium loops it.
 */
export async function writeFakeCamera(
  dir: string,
  width = 480,
  height = 640,
  photo: (width: number, height: number) => Promise<Buffer> = personJpeg,
): Promise<string> {
  const { data } = await sharp(await photo(width, height))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const y = Buffer.alloc(width * height);
  const u = Buffer.alloc((width / 2) * (height / 2));
  const v = Buffer.alloc((width / 2) * (height / 2));
  const clamp = (value: number): number => Math.max(0, Math.min(255, Math.round(value)));
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      const i = (row * width + col) * 3;
      y[row * width + col] = clamp(0.299 * data[i]! + 0.587 * data[i + 1]! + 0.114 * data[i + 2]!);
    }
  }
  for (let row = 0; row < height / 2; row++) {
    for (let col = 0; col < width / 2; col++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (const [dy, dx] of [
        [0, 0],
        [0, 1],
        [1, 0],
        [1, 1],
      ] as const) {
        const i = ((row * 2 + dy) * width + col * 2 + dx) * 3;
        r += data[i]!;
        g += data[i + 1]!;
        b += data[i + 2]!;
      }
      r /= 4;
      g /= 4;
      b /= 4;
      u[row * (width / 2) + col] = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b);
      v[row * (width / 2) + col] = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b);
    }
  }
  const path = join(dir, 'camera.y4m');
  const header = Buffer.from(`YUV4MPEG2 W${width} H${height} F30:1 Ip A1:1 C420jpeg\nFRAME\n`, 'ascii');
  await writeFile(path, Buffer.concat([header, y, u, v]));
  return path;
}

/**
 * Adds a garment to the appliance's catalogue through the GUI's own route (not in the v1 OpenAPI document), with
 * the admin key and the fixture garment photo; asserts it was added (201).
 */
export async function addCatalogueGarment(
  appliance: { url: string; adminKey: string },
  fields: { name: string; category: string; sizes: string[]; barcode?: string },
): Promise<void> {
  const added = await fetch(`${appliance.url}/gui/api/garments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${appliance.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...fields, image: (await garmentJpeg()).toString('base64') }),
  });
  assert.equal(added.status, 201, `adding ${fields.name} to the catalogue`);
}
