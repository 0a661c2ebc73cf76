/**
 * Finding a catalogue garment as staff look for one: by any part of its name, category or sizes, or by its SKU
 * or barcode (typed, or typed by a USB scanner, which ends with Enter).
 */
import type { GarmentView } from '../server/gui/contract.ts';

/** Whether a garment matches what was typed (empty matches all; case does not matter). */
export function matchesGarment(garment: GarmentView, query: string): boolean {
  const text = `${garment.name} ${garment.category} ${garment.sizes.join(' ')} ${garment.sku ?? ''} ${garment.barcode ?? ''}`;
  return text.toLowerCase().includes(query.trim().toLowerCase());
}

/** The garment whose SKU or barcode is exactly `code` (a scan), if one is. */
export function garmentWithCode(garments: readonly GarmentView[], code: string): GarmentView | undefined {
  const wanted = code.trim().toLowerCase();
  if (wanted === '') return undefined;
  return garments.find((garment) => garment.sku?.toLowerCase() === wanted || garment.barcode?.toLowerCase() === wanted);
}
