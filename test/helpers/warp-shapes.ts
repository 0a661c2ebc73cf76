/**
 * Synthetic garment photos with known geometry for the warp engine's tests:
 * flat shapes drawn as SVG on a plain background, decoded to RGB.
 */
import sharp from 'sharp';
import type { RawImage } from '../../server/vision/types.ts';

/** Known points of the drawn T-shirt, in image pixels (600×700 canvas). */
export const TSHIRT = {
  width: 600,
  height: 700,
  neckLeft: { x: 250, y: 100 },
  neckRight: { x: 350, y: 100 },
  shoulderLeft: { x: 170, y: 130 },
  shoulderRight: { x: 430, y: 130 },
  armpitLeft: { x: 170, y: 260 },
  armpitRight: { x: 430, y: 260 },
  hemLeft: { x: 170, y: 620 },
  hemRight: { x: 430, y: 620 },
  sleeveEndLeft: { x: 65, y: 235 },
  sleeveEndRight: { x: 535, y: 235 },
} as const;

const TSHIRT_PATH = 'M250,100 Q300,140 350,100 L430,130 L560,210 L510,260 L430,260 L430,620 L170,620 L170,260 L90,260 L40,210 L170,130 Z';

/** Known points of the drawn trousers (500×800 canvas). */
export const TROUSERS = {
  width: 500,
  height: 800,
  waistLeft: { x: 150, y: 80 },
  waistRight: { x: 350, y: 80 },
  crotch: { x: 250, y: 330 },
  hemLeftOuter: { x: 130, y: 740 },
  hemRightOuter: { x: 370, y: 740 },
} as const;

const TROUSERS_PATH = 'M150,80 L350,80 L370,740 L270,740 L250,330 L230,740 L130,740 Z';

/** Renders an SVG path filled with `fill` on `background`, as RGB. */
export async function drawShape(width: number, height: number, path: string, fill: string, background: string): Promise<RawImage> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="${background}"/><path d="${path}" fill="${fill}"/></svg>`;
  const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 };
}

/** A flat T-shirt (short sleeves spread out) on a plain background. */
export function drawTshirt(fill = '#c0392b', background = '#f4f4f4'): Promise<RawImage> {
  return drawShape(TSHIRT.width, TSHIRT.height, TSHIRT_PATH, fill, background);
}

/** Flat trousers on a plain background. */
export function drawTrousers(fill = '#2c3e50', background = '#ffffff'): Promise<RawImage> {
  return drawShape(TROUSERS.width, TROUSERS.height, TROUSERS_PATH, fill, background);
}

/** A sleeveless dress: narrow waist, flared hem (500×900). */
export function drawDress(fill = '#27ae60', background = '#ffffff'): Promise<RawImage> {
  return drawShape(500, 900, 'M200,60 L300,60 L330,120 L320,330 L300,380 L390,840 L110,840 L200,380 L180,330 L170,120 Z', fill, background);
}
