import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2019 from 'ajv/dist/2019';
import addFormats from 'ajv-formats';

// The official JSON schema of the Open Data Contract Standard v3.1.0 (draft 2019-09), vendored
// in test/fixtures/odcs with its license; Sluice's ODCS export must validate against it.
const schemaFile = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../fixtures/odcs/odcs-json-schema-v3.1.0.json',
);

let validate: ReturnType<Ajv2019['compile']> | null = null;

/** The schema's complaints about `doc` (empty when it is a valid ODCS v3.1.0 contract). */
export function odcsErrors(doc: unknown): string[] {
  if (!validate) {
    // strict: false only tolerates the standard's own schema authoring (e.g. `examples` beside
    // `$ref`); the data is checked against every rule the schema states.
    const ajv = new Ajv2019({ allErrors: true, strict: false });
    addFormats(ajv);
    validate = ajv.compile(JSON.parse(fs.readFileSync(schemaFile, 'utf8')));
  }
  if (validate(doc)) return [];
  return (validate.errors ?? []).map(
    (e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
  );
}
