/**
 * The garment's category from its silhouette, for requests that say `auto`.
 * Rules on a few shape measures (documented in ARCHITECTURE.md):
 * legs that part over a fifth of the height → bottom; a flat, full-width
 * waistband with no shoulders → bottom (a skirt); long relative to the torso's
 * width and not narrowing at the hem → dress; long sleeves with a straight opening down the centre →
 * outerwear; anything else → top.
 */
import type { RawImage } from '../../../vision/types.ts';
import { findCrotch, upperLandmarks, type Silhouette } from './landmarks.ts';

export type DetectedCategory = 'top' | 'bottom' | 'dress' | 'outerwear';

/** The shape measures the rules use (exposed for tests and the bench). */
export interface ShapeMeasures {
  /** Legs part over at least a fifth of the height. */
  legsPart: boolean;
  /** Share of the bounding box's width covered at 3 % below the top. */
  topFill: number;
  /** Garment height over its narrowest torso width between the armpits and 75 % of the height. */
  lengthOverWaist: number;
  /** Hem width over the narrowest torso width (a dress flares or hangs straight; a bodysuit narrows). */
  hemOverWaist: number;
  /** Longest sleeve, as a fraction of the garment's height. */
  sleeveLength: number;
  /** Share of the rows between neckline and hem where a strong vertical edge runs down the centre. */
  centreOpening: number;
}

/** Measures a silhouette (and, for the opening, the photo at mask resolution). */
export function measureShape(s: Silhouette, photo?: RawImage): ShapeMeasures {
  const h = s.boxHeight;
  const cx = (s.left + s.right) / 2;
  const topRuns = s.runs(s.top + Math.max(1, Math.round(h * 0.03)));
  const covered = topRuns.reduce((sum, [a, b]) => sum + (b - a + 1), 0);
  const upper = upperLandmarks(s);
  const waist = Math.max(1, upper.waistRight.x - upper.waistLeft.x);
  const sleeveLength = Math.max(upper.sleeveLeft?.length ?? 0, upper.sleeveRight?.length ?? 0);
  return {
    legsPart: findCrotch(s, cx) !== null,
    topFill: covered / s.boxWidth,
    lengthOverWaist: h / waist,
    hemOverWaist: widestRun(s, s.bottom - h * 0.15, s.bottom) / waist,
    sleeveLength,
    centreOpening: photo ? centreOpening(s, photo, (upper.neckCentre.y + upper.hemLeft.y) / 2, upper.neckCentre.y, upper.hemLeft.y) : 0,
  };
}

function widestRun(s: Silhouette, from: number, to: number): number {
  let widest = 0;
  for (let y = Math.round(from); y <= to; y++) for (const [a, b] of s.runs(y)) widest = Math.max(widest, b - a + 1);
  return widest;
}

/** Classifies measured shape. */
export function classify(m: ShapeMeasures): DetectedCategory {
  if (m.legsPart) return 'bottom';
  if (m.topFill > 0.75 && m.lengthOverWaist < 2.6) return 'bottom';
  if (m.lengthOverWaist > 3 && m.hemOverWaist > 0.9) return 'dress';
  if (m.sleeveLength > 0.55 && m.centreOpening > 0.55) return 'outerwear';
  return 'top';
}

/** Detects the category of a cut-out garment. */
export function detectCategory(s: Silhouette, photo?: RawImage): DetectedCategory {
  return classify(measureShape(s, photo));
}

/**
 * A front opening (zip, button placket, open front) shows as a strong
 * horizontal lightness step within a few pixels of the centre line, row after row.
 */
function centreOpening(s: Silhouette, photo: RawImage, _mid: number, from: number, to: number): number {
  const cx = Math.round((s.left + s.right) / 2);
  const reach = Math.max(2, Math.round(s.boxWidth * 0.03));
  let rows = 0;
  let hits = 0;
  const c = photo.channels;
  const lum = (x: number, y: number): number => {
    const p = (y * photo.width + x) * c;
    return 0.299 * photo.data[p]! + 0.587 * photo.data[p + 1]! + 0.114 * photo.data[p + 2]!;
  };
  for (let y = Math.round(from + (to - from) * 0.15); y < to; y++) {
    rows++;
    let best = 0;
    for (let x = cx - reach; x <= cx + reach; x++) {
      if (!s.at(x - 1, y) || !s.at(x + 1, y)) {
        best = 255;
        break;
      }
      best = Math.max(best, Math.abs(lum(x + 1, y) - lum(x - 1, y)));
    }
    if (best > 40) hits++;
  }
  return rows ? hits / rows : 0;
}
