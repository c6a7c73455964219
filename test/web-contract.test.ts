import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The web app reads the API only through the generated client (docs/app.md): a field renamed in a
// server schema, then `npm run client:generate`, must fail the web typecheck. This compiles the web
// project against a copy of the generated client whose run resource lost `rows_out`: the runs
// screen must fail on exactly that field. (That the untouched client compiles is `npm run check`,
// which type-checks the same web project; the expected error names the field and the screen, so a
// copy that failed to compile for any other reason does not pass.)

const root = path.resolve(import.meta.dirname, '..');
const clientSrc = path.join(root, 'packages/client/src');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
// Under the repository's node_modules, so the copy resolves openapi-fetch like the real client.
const work = fs.mkdtempSync(path.join(root, 'node_modules/.cache-web-contract-'));
const run = promisify(execFile);

/** The run operations' part of the schema, where the runs screens read a run's step counters. */
function renameRunField(schema: string, from: string, to: string): string {
  let out = schema;
  for (const op of ['getProjectsEnvironmentsRuns', 'listProjectsEnvironmentsRuns']) {
    const start = out.indexOf(`\n    ${op}: {`);
    const end = out.indexOf('\n    };', start);
    expect(start, op).toBeGreaterThan(0);
    const part = out.slice(start, end);
    expect(part).toContain(`${from}: number;`);
    out = out.slice(0, start) + part.replaceAll(`${from}: number;`, `${to}: number;`) + out.slice(end);
  }
  return out;
}

function project(name: string, schema: string): string {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['index.ts', 'errors.ts']) fs.copyFileSync(path.join(clientSrc, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'schema.d.ts'), schema);
  const config = path.join(dir, 'tsconfig.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      extends: path.join(root, 'packages/web/tsconfig.json'),
      compilerOptions: { paths: { '@sluice/client': [path.join(dir, 'index.ts')] } },
    }),
  );
  return config;
}

async function typecheck(config: string): Promise<{ ok: boolean; output: string }> {
  try {
    await run(process.execPath, [tsc, '-p', config, '--noEmit'], { cwd: root, maxBuffer: 16 << 20 });
    return { ok: true, output: '' };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe('the web app against the generated contract', () => {
  it('fails to compile when a run field it reads is renamed', async () => {
    const schema = fs.readFileSync(path.join(clientSrc, 'schema.d.ts'), 'utf8');
    const renamed = await typecheck(project('renamed', renameRunField(schema, 'rows_out', 'rows_produced')));
    expect(renamed.ok).toBe(false);
    expect(renamed.output).toMatch(/packages\/web\/src\/screens\/runs-list\.tsx.*'rows_out'/);
    // Only the run screens break (where the renamed field is read or a run is passed on): an error
    // anywhere else would mean the copy itself is wrong.
    const errors = renamed.output.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(/^packages\/web\/src\/screens\/runs?-[a-z-]+\.tsx\(/);
  }, 480_000);
});
