/** The OpenAPI paths and schemas of the webhook calls (merged into server/api/openapi.ts). */
export const webhookPaths: Record<string, object> = {};
export const webhookSchemas: Record<string, object> = {};
