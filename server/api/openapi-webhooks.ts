/** The OpenAPI paths and schemas of the webhook calls (merged into server/api/openapi.ts). */
import { common, GEN_ID, json, problem, ref, TIMESTAMP } from './openapi-parts.ts';

const SECRET = { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+=*$' };

export const webhookPaths: Record<string, object> = {
  '/api/v1/webhooks/secret': {
    get: {
      operationId: 'getWebhookSecret',
      summary: 'The webhook signing secret (admin); made on first use. During a rotation, the previous one too.',
      responses: {
        '200': { description: 'The secret.', content: json(ref('WebhookSecret')) },
        '403': problem('Not an admin key.'),
        ...common,
      },
    },
  },
  '/api/v1/webhooks/secret/rotate': {
    post: {
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the webhook secret (admin); the old one keeps signing during the overlap (default 24 h).',
      responses: {
        '200': { description: 'The new secret and the previous one with its end.', content: json(ref('WebhookSecret')) },
        '403': problem('Not an admin key.'),
        ...common,
      },
    },
  },
  '/api/v1/try-on/{genId}/webhook-deliveries': {
    get: {
      operationId: 'listWebhookDeliveries',
      summary: "A try-on's webhook event and its delivery attempts (empty without a webhookUrl).",
      parameters: [GEN_ID],
      responses: {
        '200': { description: 'Deliveries.', content: json(ref('WebhookDeliveryList')) },
        '404': problem('Unknown try-on.'),
        ...common,
      },
    },
  },
  '/api/v1/try-on/{genId}/webhook-deliveries/redeliver': {
    post: {
      operationId: 'redeliverWebhook',
      summary: 'Send the webhook event again: same webhook-id, new timestamp and signature, a new retry schedule.',
      parameters: [GEN_ID],
      responses: {
        '202': { description: 'Queued for delivery now.', content: json(ref('WebhookDelivery')) },
        '404': problem('Unknown try-on.'),
        '409': problem('Still pending, or no webhook event.'),
        ...common,
      },
    },
  },
};

export const webhookSchemas: Record<string, object> = {
  WebhookSecret: {
    type: 'object',
    required: ['secret'],
    additionalProperties: false,
    properties: {
      secret: SECRET,
      previousSecret: SECRET,
      previousExpiresAt: TIMESTAMP,
    },
  },
  WebhookAttempt: {
    type: 'object',
    required: ['at', 'durationMs'],
    additionalProperties: false,
    properties: {
      at: TIMESTAMP,
      status: { type: 'integer', description: "the receiver's HTTP status" },
      error: {
        type: 'string',
        description: 'why there is no status: destination-not-allowed, invalid-url, dns-failed, timeout, connection-failed',
      },
      durationMs: { type: 'integer', minimum: 0 },
    },
  },
  WebhookDelivery: {
    type: 'object',
    required: ['eventId', 'type', 'url', 'state', 'createdAt', 'attempts', 'nextAttemptAt'],
    additionalProperties: false,
    properties: {
      eventId: { type: 'string', pattern: '^evt_[0-9A-Z]{26}$' },
      type: { enum: ['try_on.completed', 'try_on.failed', 'try_on.canceled'] },
      url: { type: 'string' },
      state: { enum: ['pending', 'delivered', 'failed', 'gone'] },
      createdAt: TIMESTAMP,
      attempts: { type: 'array', items: ref('WebhookAttempt') },
      nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  WebhookDeliveryList: {
    type: 'object',
    required: ['data'],
    additionalProperties: false,
    properties: { data: { type: 'array', items: ref('WebhookDelivery') } },
  },
};
