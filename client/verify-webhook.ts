/**
 * Checks a webhook from a fittingroom appliance: Standard Webhooks signatures
 * (HMAC-SHA256 over "id.timestamp.body" with the installation's `whsec_`
 * secret), a timestamp within 5 minutes, and a JSON body.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { WebhookPayload } from './types.ts';

/** Thrown when a webhook's signature, timestamp or body is not right. */
export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

type HeaderBag = Record<string, string | string[] | undefined> | Headers;

function header(headers: HeaderBag, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  const single = Array.isArray(value) ? value[0] : value;
  if (!single) throw new WebhookSignatureError(`the ${name} header is missing`);
  return single;
}

/**
 * Verifies a webhook and returns its parsed payload. `body` must be the raw
 * request body, exactly as received; `secret` is the `whsec_…` secret from
 * GET /api/v1/webhooks/secret. Throws WebhookSignatureError otherwise.
 */
export function verifyWebhook(headers: HeaderBag, body: string | Buffer, secret: string): WebhookPayload {
  const wanted = {
    'webhook-id': header(headers, 'webhook-id'),
    'webhook-timestamp': header(headers, 'webhook-timestamp'),
    'webhook-signature': header(headers, 'webhook-signature'),
  };
  try {
    return new Webhook(secret).verify(body, wanted) as WebhookPayload;
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw new WebhookSignatureError(error.message);
    throw error;
  }
}
