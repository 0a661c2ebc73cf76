/**
 * What gravity does to a drawn garment at the shoulders: cloth rests on
 * them. A garment laid flat has square shoulders and sleeves spread or
 * hanging as blocks; fitted to a body with sloping shoulders and arms at
 * the sides, its corners would stand off the body like pads or wings. Near
 * the shoulders, the garment may reach only a little way past the person's
 * outline (a collar or a puffer's thickness), a margin that widens towards
 * the armpits, where a sleeve's ease or a jacket's cut may stand away.
 */
import { REGION, type PersonAnalysis } from '../../../vision/types.ts';
import type { BodyFrame } from './body.ts';
import type { Layer } from './render.ts';

/**
 * The margin past the person's outline, in shoulder widths: `top` at the shoulders' tops, growing to `bottom`
 * at `depth` torso lengths below the shoulders (about the armpits), free below. Within `neck` shoulder widths of
 * the centre line nothing is clipped (collars, hoods). `feather` pixels soften the cut.
 */
const DRAPE = { top: 0.03, bottom: 0.16, depth: 0.3, neck: 0.3, feather: 1.5 } as const;

/**
 * Distance (px, chamfer 3-4 / 3) from each pixel to the nearest pixel of the person's body (the head and hair,
 * which may hang over the shoulders, are not body), cached per analysis.
 */
const distances = new WeakMap<PersonAnalysis, Float32Array>();
export function distanceToBody(person: PersonAnalysis): Float32Array {
  let d = distances.get(person);
  if (d) return d;
  const { data, width, height } = person.matte;
  const labels = person.layout.labels;
  d = new Float32Array(width * height);
  for (let i = 0; i < d.length; i++) d[i] = data[i]! >= 128 && labels[i] !== REGION.head ? 0 : 1e9;
  const at = (x: number, y: number): number => (x < 0 || y < 0 || x >= width || y >= height ? 1e9 : d![y * width + x]!);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      d[i] = Math.min(d[i]!, at(x - 1, y) + 3, at(x, y - 1) + 3, at(x - 1, y - 1) + 4, at(x + 1, y - 1) + 4);
    }
  }
  for (let y = height - 1; y >= 0; y--) {
    for (let x = width - 1; x >= 0; x--) {
      const i = y * width + x;
      d[i] = Math.min(d[i]!, at(x + 1, y) + 3, at(x, y + 1) + 3, at(x + 1, y + 1) + 4, at(x - 1, y + 1) + 4);
    }
  }
  for (let i = 0; i < d.length; i++) d[i] = d[i]! / 3;
  distances.set(person, d);
  return d;
}

/** The layer with what stands off the shoulders (see DRAPE) taken away; the layer itself is changed. */
export function restOnShoulders(layer: Layer, body: BodyFrame, person: PersonAnalysis): Layer {
  const distance = distanceToBody(person);
  const { width, height } = person.matte;
  const { origin, down, side, unit, shoulderTop } = body;
  const along = (x: number, y: number): number => (x - origin.x) * down.x + (y - origin.y) * down.y;
  const across = (x: number, y: number): number => (x - origin.x) * side.x + (y - origin.y) * side.y;
  const top = Math.min(along(shoulderTop.left.x, shoulderTop.left.y), along(shoulderTop.right.x, shoulderTop.right.y));
  const depth = DRAPE.depth * body.torsoLength;
  for (let y = 0; y < layer.height; y++) {
    const py = layer.y0 + y;
    for (let x = 0; x < layer.width; x++) {
      const o = y * layer.width + x;
      if (layer.alpha[o]! <= 0) continue;
      const px = layer.x0 + x;
      if (Math.abs(across(px, py)) < DRAPE.neck * unit) continue;
      const t = (along(px, py) - top) / depth;
      if (t > 1) continue;
      const margin = unit * (DRAPE.top + Math.max(0, t) * (DRAPE.bottom - DRAPE.top));
      const d = px < 0 || py < 0 || px >= width || py >= height ? Infinity : distance[py * width + px]!;
      const keep = Math.min(1, Math.max(0, (margin - d) / DRAPE.feather + 0.5));
      layer.alpha[o] = layer.alpha[o]! * keep;
    }
  }
  return layer;
}
