/**
 * Validates real responses against the served OpenAPI document: the
 * operation and status must be documented and a JSON body must match its
 * schema. startTestAppliance() runs every response through this, so the
 * document cannot drift from the code.
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { openApiDocument } from '../../server/api/openapi.ts';

const BASE = 'https://fittingroom.local/openapi';
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}

const doc = JSON.parse(JSON.stringify(openApiDocument('test')).replaceAll('"#/components/schemas/', `"${BASE}#/components/schemas/`)) as {
  paths: Record<string, Record<string, Operation>>;
  components: object;
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: BASE, components: doc.components });
const compiled = new Map<object, ValidateFunction>();
const templates = Object.keys(doc.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

function validator(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Asserts that a response is described by the OpenAPI document. */
export function checkAgainstOpenApi(method: string, url: string, status: number, contentType: string | null, body: string): void {
  const path = new URL(url).pathname;
  const match = templates.find((candidate) => candidate.pattern.test(path));
  if (!match) {
    assert.equal(status, 404, `${method} ${path} is not in the OpenAPI document but answered ${status}`);
    return;
  }
  const operation = doc.paths[match.template]![method.toLowerCase()];
  if (!operation) {
    assert.ok(status === 404 || status === 405, `${method} ${match.template} is not documented but answered ${status}`);
    return;
  }
  const response = operation.responses[String(status)];
  assert.ok(response, `${method} ${match.template} answered ${status}, which the document does not list`);
  const type = (contentType ?? '').split(';')[0]!.trim();
  if (status === 204 || type.startsWith('image/')) {
    if (type) assert.ok(response.content?.[type], `${method} ${match.template} ${status} sent ${type}, not documented`);
    return;
  }
  const schema = response.content?.[type]?.schema;
  assert.ok(schema, `${method} ${match.template} ${status} sent ${type}, not documented`);
  const validate = validator(schema);
  const data = JSON.parse(body) as unknown;
  assert.ok(validate(data), `${method} ${match.template} ${status} body does not match the document: ${ajv.errorsText(validate.errors)}`);
}
