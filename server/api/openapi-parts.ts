/** Building blocks of the OpenAPI document, shared by every feature's paths. */

/** A reference to a schema in components. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** A JSON body with `schema`. */
export const json = (schema: object) => ({ 'application/json': { schema } });
/** A problem+json response. */
export const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ref('Problem') } } });
/** A required string path parameter. */
export const idParam = (name: string, pattern: string) => ({ name, in: 'path', required: true, schema: { type: 'string', pattern } });
export const GEN_ID = idParam('genId', '^gen_[0-9A-Z]{26}$');
export const TIMESTAMP = { type: 'string', format: 'date-time' };

/** Responses every authenticated call may give. */
export const common = {
  '401': problem('Missing, unknown, revoked or expired API key.'),
  '429': problem('Rate limited; see Retry-After.'),
  '500': problem('Internal error.'),
  '503': problem('The disk refused a write (storage_unavailable, nothing changed); see Retry-After.'),
};
