/** The OpenAPI paths and schemas of redeem, usage and ledger (merged into server/api/openapi.ts). */
import { common, json, problem, ref, TIMESTAMP } from './openapi-parts.ts';

const COUNTS = {
  submitted: { type: 'integer', minimum: 0, description: 'generations created in the period' },
  completed: { type: 'integer', minimum: 0, description: 'generations that completed in the period' },
  failed: { type: 'integer', minimum: 0 },
  canceled: { type: 'integer', minimum: 0 },
  creditsUsed: { type: 'integer', minimum: 0, description: 'credits captured in the period' },
};
const COUNT_NAMES = Object.keys(COUNTS);

export const creditPaths: Record<string, object> = {
  '/api/v1/credits/redeem': {
    post: {
      operationId: 'redeemVoucher',
      summary: 'Redeem a voucher (admin): its credits are added to the paid credits, once per voucher id.',
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['voucher'],
          properties: {
            voucher: {
              type: 'string',
              maxLength: 2048,
              description:
                'frv1.<issuer key id>.<base64url payload>.<base64url Ed25519 signature>, as `fittingroom vouchers mint` prints it',
            },
          },
        }),
      },
      responses: {
        '200': { description: 'Redeemed.', content: json(ref('Redemption')) },
        '400': problem('Malformed JSON.'),
        ...common,
        '403': problem('Not an admin key.'),
        '409': problem('This voucher was already redeemed.'),
        '415': problem('Not JSON.'),
        '422': problem('Not a voucher, a bad signature, an untrusted issuer, expired, or bound to another installation.'),
      },
    },
  },
  '/api/v1/usage': {
    get: {
      operationId: 'getUsage',
      summary: 'Try-ons and credits used per UTC day or hour, derived from the generations and the ledger.',
      parameters: [
        {
          name: 'from',
          in: 'query',
          description: 'ISO 8601 date or date-time, rounded down to its period; default: 30 days (24 hours) before `to`',
          schema: { type: 'string' },
        },
        {
          name: 'to',
          in: 'query',
          description: 'ISO 8601 date or date-time (exclusive), rounded up to its period; default: the end of the current period',
          schema: { type: 'string' },
        },
        { name: 'granularity', in: 'query', schema: { enum: ['day', 'hour'], default: 'day' } },
      ],
      responses: {
        '200': { description: 'Usage.', content: json(ref('Usage')) },
        '400': problem('Bad dates or granularity, from not before to, or more than 400 days (31 days of hours).'),
        ...common,
      },
    },
  },
  '/api/v1/ledger': {
    get: {
      operationId: 'listLedger',
      summary: 'The append-only credit ledger (admin), newest first.',
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': { description: 'A page.', content: json(ref('LedgerPage')) },
        '400': problem('Bad limit or cursor.'),
        ...common,
        '403': problem('Not an admin key.'),
      },
    },
  },
};

export const creditSchemas: Record<string, object> = {
  Redemption: {
    type: 'object',
    required: ['voucherId', 'creditsAdded', 'creditsRemaining'],
    additionalProperties: false,
    properties: {
      voucherId: { type: 'string' },
      creditsAdded: { type: 'integer', minimum: 1 },
      creditsRemaining: { type: 'integer', minimum: 0 },
    },
  },
  UsageCounts: { type: 'object', required: COUNT_NAMES, additionalProperties: false, properties: COUNTS },
  Usage: {
    type: 'object',
    required: ['from', 'to', 'granularity', 'periods', 'totals'],
    additionalProperties: false,
    properties: {
      from: TIMESTAMP,
      to: TIMESTAMP,
      granularity: { enum: ['day', 'hour'] },
      periods: {
        type: 'array',
        items: {
          type: 'object',
          required: ['start', ...COUNT_NAMES],
          additionalProperties: false,
          properties: { start: TIMESTAMP, ...COUNTS },
        },
      },
      totals: ref('UsageCounts'),
    },
  },
  LedgerEntry: {
    type: 'object',
    required: ['id', 'seq', 'type', 'amount', 'lot', 'at'],
    additionalProperties: false,
    properties: {
      id: { type: 'string' },
      seq: { type: 'integer', minimum: 1 },
      type: { enum: ['trial', 'redeem', 'reserve', 'capture', 'release', 'expire', 'adjust'] },
      amount: { type: 'integer', description: 'credits moved; negative only on an adjust' },
      lot: { enum: ['trial', 'paid'] },
      at: TIMESTAMP,
      genId: { type: 'string' },
      expiresAt: TIMESTAMP,
      note: { type: 'string' },
    },
  },
  LedgerPage: {
    type: 'object',
    required: ['data', 'nextCursor'],
    additionalProperties: false,
    properties: { data: { type: 'array', items: ref('LedgerEntry') }, nextCursor: { type: ['string', 'null'] } },
  },
};
