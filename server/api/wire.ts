/**
 * How records look on the wire (contract 2.3). Views are built from the
 * record, the ledger and the runner's live progress; nothing is cached.
 */
import { redactPaths } from '../kernel/redact.ts';
import type { LiveProgress } from '../jobs/runner.ts';
import type { GenerationRecord, StoredImage } from '../store/schema.ts';

/** The status of a try-on as GET /api/v1/try-on/<genId> returns it. */
export interface GenerationView {
  genId: string;
  status: GenerationRecord['status'];
  stage?: LiveProgress['stage'];
  progress?: number;
  createdAt: string;
  completedAt?: string;
  image?: string;
  imageUrl?: string;
  creditsRemaining: number;
  creditCharged: boolean;
  error?: { code: string; message: string };
  expiresAt: string;
  erased?: boolean;
  engine: string;
  attempts: number;
}

export interface ViewContext {
  /** The account's credits remaining as the reply is made. */
  creditsRemaining: number;
  now: Date;
  baseUrl: string;
  live: (id: string) => LiveProgress;
}

/** The URL of a generation's status. */
export function statusUrl(baseUrl: string, id: string): string {
  return `${baseUrl}/api/v1/try-on/${id}`;
}

/** The view of one generation; given a reader, a complete one carries its image inline. */
export async function generationView(
  record: GenerationRecord,
  context: ViewContext,
  readImage?: (image: StoredImage) => Promise<Buffer>,
): Promise<GenerationView> {
  const view: GenerationView = {
    genId: record.id,
    status: record.status,
    createdAt: record.createdAt,
    creditsRemaining: context.creditsRemaining,
    creditCharged: record.credit === 'captured',
    expiresAt: record.expiresAt,
    engine: record.engine,
    attempts: record.attempts,
  };
  if (record.status === 'pending') {
    const live = context.live(record.id);
    view.stage = live.stage;
    view.progress = Math.round(live.progress * 1000) / 1000;
  }
  if (record.completedAt) view.completedAt = record.completedAt;
  if (record.error) view.error = { code: record.error.code, message: redactPaths(record.error.message) };
  if (record.erased) view.erased = true;
  if (record.status === 'complete' && record.result) {
    view.imageUrl = `${statusUrl(context.baseUrl, record.id)}/image`;
    if (readImage) view.image = (await readImage(record.result)).toString('base64');
  }
  return view;
}
