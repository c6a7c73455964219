import fs from 'node:fs';
import {
  buildOpenApiDocument,
  documentPath,
  renderSchemaTypes,
  schemaPath,
  serializeDocument,
} from './openapi-document';

// `npm run client:generate`: rerun whenever a route or a route schema changes.
const doc = await buildOpenApiDocument();
fs.writeFileSync(documentPath, serializeDocument(doc));
fs.writeFileSync(schemaPath, await renderSchemaTypes(doc));
const count = Object.keys((doc.paths ?? {}) as object).length;
console.log(`wrote ${documentPath} (${count} paths) and ${schemaPath}`);
