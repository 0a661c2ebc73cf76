/**
 * One error type for the whole API and a frozen registry of stable codes.
 * Clients branch on `code`; `status` and `title` come from the registry so that
 * a code can never be sent with the wrong status.
 */

export const PROBLEMS = Object.freeze({
  invalid_request: { status: 400, title: 'Invalid request' },
  idempotency_key_invalid: { status: 400, title: 'Invalid Idempotency-Key' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  insufficient_credits: { status: 402, title: 'Insufficient credits' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  conflict: { status: 409, title: 'Conflict' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency-Key in use' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  invalid_image: { status: 422, title: 'Invalid image' },
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key reused' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal error' },
  engine_unavailable: { status: 503, title: 'No engine available' },
  queue_full: { status: 503, title: 'Queue full' },
  unavailable: { status: 503, title: 'Service unavailable' },
  storage_unavailable: { status: 503, title: 'Storage unavailable' },
} as const);

export type ProblemCode = keyof typeof PROBLEMS;

/** One failed field of a validation problem. */
export interface FieldError {
  field: string;
  message: string;
}

/** The RFC 9457 body every error response carries. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  requestId: string;
  errors?: FieldError[];
}

/** Options that some problems carry beyond code and detail. */
export interface ApiErrorOptions {
  errors?: FieldError[];
  retryAfterSeconds?: number;
  headers?: Record<string, string>;
}

/** An error that the final handler renders as application/problem+json. */
export class ApiError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ProblemCode, detail: string, options: ApiErrorOptions = {}) {
    super(detail);
    this.name = 'ApiError';
    this.code = code;
    this.status = PROBLEMS[code].status;
    this.errors = options.errors;
    this.headers = { ...options.headers };
    if (options.retryAfterSeconds !== undefined) {
      this.headers['Retry-After'] = String(Math.max(1, Math.ceil(options.retryAfterSeconds)));
    }
    if (code === 'unauthorized') this.headers['WWW-Authenticate'] = 'Bearer';
  }

  /** The problem+json body for this error. */
  toProblem(requestId: string): ProblemBody {
    const body: ProblemBody = {
      type: `https://fittingroom.local/problems/${this.code.replaceAll('_', '-')}`,
      title: PROBLEMS[this.code].title,
      status: this.status,
      detail: this.message,
      code: this.code,
      requestId,
    };
    if (this.errors && this.errors.length > 0) body.errors = this.errors;
    return body;
  }
}

/** A 422 validation problem listing every failed field. */
export function validationError(errors: FieldError[]): ApiError {
  const detail = errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : `${errors.length} fields are invalid.`;
  return new ApiError('validation_failed', detail, { errors });
}

/** errno codes of a disk that is full, read-only or failing, or of a process out of file handles: try again later. */
const STORAGE_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EMFILE', 'ENFILE']);

/** How long a client should wait before retrying after a storage failure. */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

/** True for a write the disk refused (a full or failing disk), as opposed to a bug: the same write may succeed later. */
export function isStorageFailure(error: unknown): boolean {
  if (error instanceof ApiError) return error.code === 'storage_unavailable';
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && STORAGE_ERRNOS.has(code);
}

/** The 503 a storage failure answers with: nothing was changed, try again shortly. */
export function storageUnavailable(cause: unknown): ApiError {
  const error = new ApiError(
    'storage_unavailable',
    'The appliance could not write to its disk (it may be full or failing); nothing was changed. Try again shortly.',
    { retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS },
  );
  error.cause = cause;
  return error;
}
