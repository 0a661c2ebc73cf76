/**
 * The shapes of the v1 API as a client sees them. The server's own view types
 * are the source (server/api/wire.ts and friends); these re-export them so
 * that client and server cannot disagree.
 */
export type { GenerationView as TryOn } from '../server/api/wire.ts';
export type { AccountSummary as Account } from '../server/credits/ledger.ts';
export type { EngineDescription as Engine } from '../server/engines/types.ts';
export type { ProblemBody as Problem } from '../server/kernel/errors.ts';
export type { UsageReport as Usage, Granularity } from '../server/credits/usage.ts';
export type { Redemption } from '../server/vouchers/redeem.ts';
import type { LedgerEntry } from '../server/store/schema.ts';
export type { LedgerEntry };

/** A page of GET /api/v1/ledger, newest first. */
export interface LedgerPage {
  data: LedgerEntry[];
  nextCursor: string | null;
}

/** The body of a webhook (contract 2.9). */
export interface WebhookPayload {
  id: string;
  type: 'try_on.completed' | 'try_on.failed' | 'try_on.canceled';
  createdAt: string;
  data: {
    genId: string;
    status: 'complete' | 'failed' | 'canceled';
    statusUrl: string;
    imageUrl?: string;
    creditsRemaining: number;
    error?: { code: string; message: string };
  };
}

export type { PublicKey as ApiKey } from '../server/keys/api-keys.ts';
export type { SecretView as WebhookSecret } from '../server/webhooks/secrets.ts';
