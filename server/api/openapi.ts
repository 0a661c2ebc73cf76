/**
 * The OpenAPI 3.1 description of the v1 API, served at /api/v1/openapi.json.
 * Integration tests validate every real response against it
 * (test/helpers/openapi-check.ts), so it cannot drift from the code.
 */
import { PROBLEMS } from '../kernel/errors.ts';
import { FITS, GARMENT_CATEGORIES, GENERATION_ERROR_CODES, IMAGE_FORMATS, OCCASIONS, STYLINGS } from '../kernel/vocabulary.ts';
import { common, GEN_ID, idParam, json, problem, ref, TIMESTAMP } from './openapi-parts.ts';
import { creditPaths, creditSchemas } from './openapi-credits.ts';
import { webhookPaths, webhookSchemas } from './openapi-webhooks.ts';

const KEY_ID = idParam('id', '^key_[0-9A-Z]{26}$');
const IMAGE = {
  type: 'string',
  description:
    'base64, or a data:image/...;base64, URL; JPEG, PNG or WebP (by content); ≤ 15 MB decoded, ≤ 40 megapixels, shortest side ≥ 256 px.',
};
const SIZE = { type: 'string', description: 'XXS XS S M L XL XXL(2XL) 3XL 4XL (any case), even EU 30–64, or waist W24–W44.' };

const KEY_FIELDS = {
  id: { type: 'string' },
  name: { type: 'string' },
  scope: { enum: ['admin', 'standard'] },
  prefix: { type: 'string' },
  createdAt: TIMESTAMP,
  revokedAt: TIMESTAMP,
  expiresAt: TIMESTAMP,
};

const schemas = {
  Problem: {
    type: 'object',
    required: ['type', 'title', 'status', 'detail', 'code', 'requestId'],
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { enum: Object.keys(PROBLEMS) },
      requestId: { type: 'string' },
      errors: {
        type: 'array',
        items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } },
      },
    },
  },
  TryOnRequest: {
    type: 'object',
    required: ['selfie', 'items', 'size'],
    additionalProperties: false,
    properties: {
      selfie: IMAGE,
      items: { type: 'array', minItems: 1, maxItems: 4, items: IMAGE },
      size: SIZE,
      personSize: SIZE,
      fit: { enum: [...FITS] },
      occasion: { enum: [...OCCASIONS] },
      styling: { type: 'array', items: { enum: [...STYLINGS] } },
      categories: { type: 'array', items: { enum: [...GARMENT_CATEGORIES] } },
      engine: { type: 'string' },
      seed: { type: 'integer', minimum: 0 },
      outputFormat: { enum: [...IMAGE_FORMATS] },
      webhookUrl: { type: 'string', format: 'uri', maxLength: 2048 },
    },
  },
  Accepted: {
    type: 'object',
    required: ['genId', 'status', 'statusUrl', 'creditsRemaining'],
    additionalProperties: false,
    properties: {
      genId: { type: 'string' },
      status: { const: 'pending' },
      statusUrl: { type: 'string' },
      creditsRemaining: { type: 'integer', minimum: 0 },
    },
  },
  Generation: {
    type: 'object',
    required: ['genId', 'status', 'createdAt', 'creditsRemaining', 'creditCharged', 'expiresAt', 'engine', 'attempts'],
    additionalProperties: false,
    properties: {
      genId: { type: 'string' },
      status: { enum: ['pending', 'complete', 'failed', 'canceled'] },
      stage: { enum: ['queued', 'preprocessing', 'generating', 'finishing'] },
      progress: { type: 'number', minimum: 0, maximum: 1 },
      createdAt: TIMESTAMP,
      completedAt: TIMESTAMP,
      image: { type: 'string', description: 'base64 of the result in outputFormat; only on GET of one complete generation' },
      imageUrl: { type: 'string' },
      creditsRemaining: { type: 'integer', minimum: 0 },
      creditCharged: { type: 'boolean' },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: {
            enum: [...GENERATION_ERROR_CODES],
          },
          message: { type: 'string' },
        },
      },
      expiresAt: TIMESTAMP,
      erased: { const: true },
      engine: { type: 'string' },
      attempts: { type: 'integer', minimum: 0 },
    },
  },
  GenerationList: {
    type: 'object',
    required: ['data', 'nextCursor'],
    properties: { data: { type: 'array', items: ref('Generation') }, nextCursor: { type: ['string', 'null'] } },
  },
  Account: {
    type: 'object',
    required: ['creditsRemaining', 'creditsReserved', 'trialCreditsRemaining', 'trialExpiresAt'],
    additionalProperties: false,
    properties: {
      creditsRemaining: { type: 'integer', minimum: 0 },
      creditsReserved: { type: 'integer', minimum: 0 },
      trialCreditsRemaining: { type: 'integer', minimum: 0 },
      trialExpiresAt: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  CreditPack: {
    type: 'object',
    required: ['id', 'credits', 'priceEur', 'perGenerationEur'],
    properties: {
      id: { type: 'string' },
      credits: { type: 'integer' },
      priceEur: { type: 'number' },
      perGenerationEur: { type: 'number' },
    },
  },
  Engine: {
    type: 'object',
    required: ['id', 'name', 'ready', 'device', 'license', 'resolution', 'honors', 'typicalSeconds'],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      ready: { type: 'boolean' },
      reason: { type: 'string', description: 'why the engine is not ready' },
      device: { type: 'string' },
      license: { type: 'string' },
      resolution: {
        type: 'object',
        required: ['width', 'height'],
        properties: { width: { type: 'integer' }, height: { type: 'integer' } },
      },
      honors: { type: 'array', items: { type: 'string' } },
      typicalSeconds: { type: 'number' },
      about: { type: 'string', description: 'what a picture from this engine is, in words for the people looking at it' },
      workers: {
        type: 'array',
        description: 'on a shared database only: the live workers of the fleet that run this engine (none: not ready)',
        items: {
          type: 'object',
          required: ['id', 'host', 'device', 'running', 'seenAt'],
          properties: {
            id: { type: 'string' },
            host: { type: 'string' },
            device: { type: 'string' },
            running: { type: 'integer', description: 'try-ons it runs now' },
            seenAt: { type: 'string', format: 'date-time', description: 'its last heartbeat' },
          },
        },
      },
    },
  },
  Health: {
    type: 'object',
    required: ['status', 'version', 'engines', 'queueDepth'],
    properties: {
      status: { enum: ['ok', 'degraded'] },
      version: { type: 'string' },
      engines: {
        type: 'array',
        items: { type: 'object', required: ['id', 'ready'], properties: { id: { type: 'string' }, ready: { type: 'boolean' } } },
      },
      queueDepth: { type: 'integer', minimum: 0 },
    },
  },
  ApiKey: { type: 'object', required: ['id', 'name', 'scope', 'prefix', 'createdAt'], additionalProperties: false, properties: KEY_FIELDS },
  ApiKeyCreated: {
    type: 'object',
    required: ['id', 'name', 'scope', 'prefix', 'createdAt', 'key'],
    additionalProperties: false,
    properties: {
      ...KEY_FIELDS,
      key: { type: 'string', pattern: '^fr_live_[0-9A-Za-z]{38}$', description: 'shown only in this reply' },
      previous: ref('ApiKey'),
    },
  },
};

/** The OpenAPI document. */
export function openApiDocument(version: string): object {
  return {
    openapi: '3.1.0',
    info: {
      title: 'fittingroom API',
      version,
      description:
        'The v1 HTTP API of the fittingroom virtual try-on appliance. Errors are application/problem+json (RFC 9457) with a stable `code`.',
    },
    servers: [{ url: 'http://127.0.0.1:8787' }],
    security: [{ bearer: [] }],
    paths: {
      ...creditPaths,
      ...webhookPaths,
      '/api/v1/try-on': {
        post: {
          operationId: 'submitTryOn',
          summary: 'Submit a try-on; reserves 1 credit.',
          parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string', minLength: 1, maxLength: 255 } }],
          requestBody: { required: true, content: json(ref('TryOnRequest')) },
          responses: {
            '202': {
              description: 'Accepted; poll statusUrl (also in Location).',
              headers: { Location: { schema: { type: 'string' } } },
              content: json(ref('Accepted')),
            },
            '400': problem('Malformed JSON or Idempotency-Key.'),
            ...common,
            '402': problem('No credits available.'),
            '409': problem('A request with this Idempotency-Key is still executing.'),
            '413': problem('Body or an image too large.'),
            '415': problem('Not JSON, or an image that is not JPEG, PNG or WebP.'),
            '422': problem('Validation failed, invalid image, or Idempotency-Key reused with another request.'),
            '503': problem('No engine available, the queue is full, or the disk refused the write; see Retry-After.'),
          },
        },
        get: {
          operationId: 'listTryOns',
          summary: 'List try-ons, newest first, without images.',
          parameters: [
            { name: 'status', in: 'query', schema: { enum: ['pending', 'complete', 'failed', 'canceled'] } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
            { name: 'cursor', in: 'query', schema: { type: 'string' } },
          ],
          responses: { '200': { description: 'A page.', content: json(ref('GenerationList')) }, '400': problem('Bad query.'), ...common },
        },
      },
      '/api/v1/try-on/{genId}': {
        get: {
          operationId: 'getTryOn',
          summary: 'Status of a try-on; with wait, held until it is terminal or the bound passes.',
          parameters: [
            GEN_ID,
            { name: 'wait', in: 'query', schema: { oneOf: [{ enum: ['true', 'false'] }, { type: 'integer', minimum: 1, maximum: 120 }] } },
            { name: 'Prefer', in: 'header', schema: { type: 'string', examples: ['wait=10'] } },
          ],
          responses: {
            '200': { description: 'The current state (pending at the bound, with Retry-After: 1).', content: json(ref('Generation')) },
            '400': problem('Bad wait value.'),
            '404': problem('Unknown try-on.'),
            ...common,
          },
        },
        delete: {
          operationId: 'eraseTryOn',
          summary: "Erase a try-on's images (canceling it if pending); the record stays.",
          parameters: [GEN_ID],
          responses: { '204': { description: 'Erased.' }, '404': problem('Unknown try-on.'), ...common },
        },
      },
      '/api/v1/try-on/{genId}/image': {
        get: {
          operationId: 'getTryOnImage',
          summary: 'The result image.',
          parameters: [GEN_ID],
          responses: {
            '200': { description: 'The image.', content: { 'image/jpeg': {}, 'image/png': {}, 'image/webp': {} } },
            '404': problem('Unknown try-on, or its image was erased.'),
            '409': problem('Not complete.'),
            ...common,
          },
        },
      },
      '/api/v1/try-on/{genId}/cancel': {
        post: {
          operationId: 'cancelTryOn',
          summary: 'Cancel a pending try-on; releases its credit.',
          parameters: [GEN_ID],
          responses: {
            '200': { description: 'Canceled.', content: json(ref('Generation')) },
            '404': problem('Unknown try-on.'),
            '409': problem('Already terminal.'),
            ...common,
          },
        },
      },
      '/api/v1/account': {
        get: {
          operationId: 'getAccount',
          summary: 'Credits.',
          responses: { '200': { description: 'Credits.', content: json(ref('Account')) }, ...common },
        },
      },
      '/api/v1/credit-packs': {
        get: {
          operationId: 'listCreditPacks',
          summary: 'The credit packs.',
          responses: { '200': { description: 'Packs.', content: json({ type: 'array', items: ref('CreditPack') }) }, ...common },
        },
      },
      '/api/v1/engines': {
        get: {
          operationId: 'listEngines',
          summary: 'Installed engines.',
          responses: { '200': { description: 'Engines.', content: json({ type: 'array', items: ref('Engine') }) }, ...common },
        },
      },
      '/api/v1/keys': {
        get: {
          operationId: 'listKeys',
          summary: 'API keys (admin).',
          responses: {
            '200': { description: 'Keys, never the secrets.', content: json({ type: 'array', items: ref('ApiKey') }) },
            '403': problem('Not an admin key.'),
            ...common,
          },
        },
        post: {
          operationId: 'createKey',
          summary: 'Create an API key (admin); the key is shown once.',
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              required: ['name'],
              properties: {
                name: { type: 'string', minLength: 1, maxLength: 100 },
                scope: { enum: ['admin', 'standard'], default: 'standard' },
              },
            }),
          },
          responses: {
            '201': { description: 'Created.', content: json(ref('ApiKeyCreated')) },
            '403': problem('Not an admin key.'),
            '422': problem('Invalid name or scope.'),
            ...common,
          },
        },
      },
      '/api/v1/keys/{id}': {
        delete: {
          operationId: 'revokeKey',
          summary: 'Revoke an API key at once (admin).',
          parameters: [KEY_ID],
          responses: {
            '204': { description: 'Revoked.' },
            '403': problem('Not an admin key.'),
            '404': problem('Unknown key.'),
            '409': problem('The last active admin key.'),
            ...common,
          },
        },
      },
      '/api/v1/keys/{id}/rotate': {
        post: {
          operationId: 'rotateKey',
          summary: 'Replace an API key; the old one works for graceSeconds (default 24 h).',
          parameters: [KEY_ID],
          requestBody: {
            content: json({ type: 'object', properties: { graceSeconds: { type: 'integer', minimum: 0, maximum: 2_592_000 } } }),
          },
          responses: {
            '201': { description: 'The new key, shown once, and the old one with its expiry.', content: json(ref('ApiKeyCreated')) },
            '403': problem('Not an admin key.'),
            '404': problem('Unknown key.'),
            '409': problem('Revoked or expired.'),
            '422': problem('Bad graceSeconds.'),
            ...common,
          },
        },
      },
      '/api/v1/health': {
        get: {
          operationId: 'health',
          summary: 'Liveness (no authentication).',
          security: [],
          responses: { '200': { description: 'Health.', content: json(ref('Health')) } },
        },
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document (no authentication).',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1.', content: json({ type: 'object' }) } },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'fr_live_ API key' } },
      schemas: { ...schemas, ...creditSchemas, ...webhookSchemas },
    },
  };
}
