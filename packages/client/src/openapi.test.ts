import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildOpenApiDocument,
  documentPath,
  renderSchemaTypes,
  schemaPath,
  serializeDocument,
} from './openapi-document';

// The committed document and types must be what the server serves today; when this fails,
// run `npm run client:generate` and commit packages/client/openapi.json and src/schema.d.ts.
describe('generated client', () => {
  let fresh: Record<string, unknown>;
  beforeAll(async () => {
    fresh = await buildOpenApiDocument();
  }, 120_000);

  it('openapi.json matches the server routes', () => {
    const committed = fs.readFileSync(documentPath, 'utf8');
    expect(committed, 'run `npm run client:generate`').toBe(serializeDocument(fresh));
  });

  it('schema.d.ts matches openapi.json', async () => {
    const committed = JSON.parse(fs.readFileSync(documentPath, 'utf8'));
    expect(fs.readFileSync(schemaPath, 'utf8'), 'run `npm run client:generate`').toBe(
      await renderSchemaTypes(committed),
    );
  });
});
