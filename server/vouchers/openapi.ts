/** The OpenAPI paths and schemas of redeem, usage and ledger (merged into server/api/openapi.ts). */
export const creditPaths: Record<string, object> = {};
export const creditSchemas: Record<string, object> = {};
