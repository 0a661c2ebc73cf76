/** The credit packs of contract section 1, with their prices in euros. */
export interface CreditPack {
  id: string;
  credits: number;
  priceEur: number;
  perGenerationEur: number;
}

export const CREDIT_PACKS: readonly CreditPack[] = Object.freeze(
  [
    [1_000, 129],
    [5_000, 595],
    [10_000, 1_090],
    [50_000, 4_750],
    [100_000, 8_500],
  ].map(([credits, priceEur]) => ({
    id: `pack_${credits!}`,
    credits: credits!,
    priceEur: priceEur!,
    perGenerationEur: Math.round((priceEur! / credits!) * 1000) / 1000,
  })),
);
