/**
 * The `warp` engine's internal contract between its garment side (cut-out,
 * category, landmarks: cutout/) and its body side (fitting and
 * compositing: fit/, composite/). Coordinates are pixels of the cut-out.
 * "Left" and "right" are the wearer's own: on a garment photographed from
 * the front, the wearer's left is on the image's right.
 */
import type { RawImage } from '../../vision/types.ts';

export type WarpCategory = 'top' | 'bottom' | 'dress' | 'outerwear';

export interface Point {
  x: number;
  y: number;
}

/**
 * Key points of a garment's silhouette. Which are present depends on the
 * category: tops and outerwear have the neck, shoulders, armpits, sleeve
 * ends and hem; bottoms the waistband, crotch and leg hems; dresses the
 * neck, shoulders, armpits, waist and hem (and sleeve ends when they have
 * sleeves). A sleeve end is the centre of the sleeve's opening.
 */
export interface GarmentLandmarks {
  neckLeft?: Point;
  neckRight?: Point;
  /** The lowest point of the front neckline, on the centre line. */
  neckFront?: Point;
  /**
   * Where the front meets the inside back seen through the neck opening, on the centre line (a ghost-mannequin or flat
   * photo that shows the inside back, inside-back.ts): the front neckline as worn.
   */
  neckSeam?: Point;
  leftShoulder?: Point;
  rightShoulder?: Point;
  leftArmpit?: Point;
  rightArmpit?: Point;
  leftSleeveEnd?: Point;
  rightSleeveEnd?: Point;
  /** Half the width of each sleeve's opening, in pixels. */
  sleeveHalfWidth?: number;
  /**
   * The sleeves hang down against the body in the photo (a jumper or jacket laid flat): their inner parts lie over
   * the body, and their armpits are hidden (silhouette.ts, sleeve.ts).
   */
  sleevesHang?: boolean;
  /**
   * Worn over the customer's top, which stays where it does not cover (a knit vest: a top with no sleeves, its
   * shoulders spanning its body; silhouette.ts). Its sleeves, collar and hem showing are how such a garment is worn;
   * arms painted in place of the old sleeves were flat blocks.
   */
  layered?: boolean;
  /** Hangs from straps (a cami, a slip dress): its shoulders are the straps' tops, which lie on the shoulders. */
  straps?: boolean;
  /**
   * Hangs loose from wide straps beside armholes cut in deep (a tank top, a basketball jersey; silhouette.ts): its
   * shoulders are put where a body as wide as it is under the arms has them, and it is drawn that wide.
   */
  hangsLoose?: boolean;
  /** Narrowest point of the sides between armpit and hem (dresses; tops when shaped). */
  leftWaist?: Point;
  rightWaist?: Point;
  /** Bottom corners of the hem (tops, outerwear, dresses). */
  leftHem?: Point;
  rightHem?: Point;
  /** Top corners of the waistband (bottoms). */
  waistbandLeft?: Point;
  waistbandRight?: Point;
  crotch?: Point;
  /** Outer and inner bottom corners of each leg's hem (bottoms). */
  leftLegHemOuter?: Point;
  leftLegHemInner?: Point;
  rightLegHemOuter?: Point;
  rightLegHemInner?: Point;
}

/** A garment cut out of its product photo. */
export interface GarmentCutout {
  /** RGBA, straight (not premultiplied) alpha, cropped to the garment with a small margin. */
  image: RawImage & { channels: 4 };
  category: WarpCategory;
  /** How the category was decided. */
  categorySource: 'request' | 'silhouette';
  /** A flat-lay or ghost-mannequin photo, or a garment worn by a model. */
  photo: 'flat' | 'worn';
  /** Where the crop's top-left corner is in the garment photo. */
  origin: Point;
  landmarks: GarmentLandmarks;
  /**
   * 1 per pixel of the garment's inside back seen through its neck opening (a top's or dress's, inside-back.ts):
   * drawn only where the customer shows no bare skin (their neck stays in front of it).
   */
  insideBack?: Uint8Array;
}
