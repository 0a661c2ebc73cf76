/**
 * The GUI's calls to its appliance: same origin, the session cookie does the
 * authentication, and every state-changing call carries the CSRF token.
 * Failures become ApiProblem with the server's stable code; plainWords()
 * says what they mean for the person at the till.
 */
import type { Problem } from '../client/index.ts';

let csrfToken = '';

/** Remembers the session's CSRF token (from sign-in or GET /gui/api/session). */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** An error reply (problem+json), or a network failure (status 0). */
export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly problem: Problem | undefined;

  constructor(status: number, problem: Problem | undefined, fallback: string) {
    super(problem?.detail ?? fallback);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = problem?.code ?? (status === 0 ? 'network' : 'http_error');
    this.problem = problem;
  }
}

/** Called when a reply says the session is over (401). */
let onSignedOut: () => void = () => undefined;

/** Sets what happens when the session ends under the GUI's feet. */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/** Calls the appliance with a JSON body (or a Blob sent as its own type); resolves with the JSON body (undefined for 204). */
export async function call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const all: Record<string, string> = { accept: 'application/json', ...headers };
  if (method !== 'GET' && method !== 'HEAD') all['x-csrf-token'] = csrfToken;
  if (body !== undefined) all['content-type'] = body instanceof Blob ? body.type : 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: all,
      credentials: 'same-origin',
      ...(body === undefined ? {} : { body: body instanceof Blob ? body : JSON.stringify(body) }),
    });
  } catch {
    throw new ApiProblem(0, undefined, 'The appliance cannot be reached.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  if (!response.ok) {
    let problem: Problem | undefined;
    try {
      problem = JSON.parse(text) as Problem;
    } catch {
      problem = undefined;
    }
    const error = new ApiProblem(response.status, problem, `HTTP ${response.status}`);
    if (response.status === 401 && !path.startsWith('/gui/api/session')) onSignedOut();
    throw error;
  }
  return JSON.parse(text) as T;
}

const PLAIN: Record<string, string> = {
  network: 'The appliance cannot be reached. Check that it is running, then try again.',
  unauthorized: 'You are signed out. Please sign in again.',
  forbidden: 'This is not allowed from here.',
  insufficient_credits: 'There are no credits left. Redeem a voucher under Settings to continue.',
  engine_unavailable: 'No try-on engine is ready on this appliance yet. Try again in a minute, or check Settings → Engines.',
  queue_full: 'The appliance is very busy. Please try again in a moment.',
  rate_limited: 'Too many attempts in a short time. Please wait a moment and try again.',
  invalid_image: 'That picture cannot be used. Use a JPEG, PNG or WebP photo at least 256 pixels on each side.',
  payload_too_large: 'The photos are too large. Use smaller pictures.',
  no_person_detected: 'No person could be seen in the photo. Stand in the frame, facing the camera, and take the photo again.',
  multiple_people: 'More than one person is in the photo. Only the customer should be in the frame.',
  pose_unsupported: 'The pose is hard to dress. Stand upright, facing the camera, arms a little away from the body.',
  garment_not_detected: 'The garment could not be recognised in its photo. Use a clear photo of the garment alone.',
  engine_failed: 'The try-on engine had a problem with this one. Please try again.',
  timeout: 'The try-on took too long and was stopped. Please try again.',
  conflict: 'That cannot be done right now.',
  not_found: 'That item no longer exists.',
  storage_unavailable: 'The appliance’s disk is full or failing, so nothing was saved. Free some space, then try again.',
  request_timeout: 'The photos stopped arriving. Check the connection, then try again.',
};

/** The API's field names, as staff call those things. */
const FIELDS: [RegExp, (match: RegExpMatchArray) => string][] = [
  [/^selfie: /, () => 'The customer photo: '],
  [/^items\[(\d+)\]: /, (match) => `Garment ${Number(match[1]) + 1}: `],
  [/^items: /, () => 'The garments: '],
  [/^categories: /, () => 'The garments: '],
  [/^styling: /, () => 'Styling: '],
  [/^(size|personSize): /, () => 'The size: '],
];

/** A server's sentence with the API's field name at its start put in the shop's words. */
function plainField(detail: string): string {
  for (const [pattern, words] of FIELDS) {
    const match = detail.match(pattern);
    if (match) return detail.replace(pattern, words(match));
  }
  return detail;
}

/** Problems whose detail is already a plain sentence that says more than the general words (a wait, a reason). */
const DETAILED = new Set(['validation_failed', 'invalid_image', 'conflict', 'invalid_request', 'forbidden', 'rate_limited']);

/** What an error (or a failed try-on's error code) means, in plain words. */
export function plainWords(error: unknown): string {
  if (error instanceof ApiProblem) {
    const general = PLAIN[error.code];
    const detail = error.problem?.detail;
    if (DETAILED.has(error.code) && detail) return plainField(detail);
    return general ?? detail ?? error.message;
  }
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = String((error as { code: unknown }).code);
    return PLAIN[code] ?? String((error as { message?: unknown }).message ?? code);
  }
  return error instanceof Error ? error.message : String(error);
}
