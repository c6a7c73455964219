// Whether packages/cli/dist (scripts/build.mjs) was compiled from the sources as they are now:
// every input file still has the size and modification time recorded at build time. Any edit,
// checkout or missing build means no, and the CLI runs its sources through tsx instead.
import fs from 'node:fs';

export function compiledBuildIsFresh(cliDir) {
  let inputs;
  try {
    inputs = JSON.parse(fs.readFileSync(new URL('dist/inputs.json', cliDir), 'utf8'));
  } catch {
    return false;
  }
  for (const [file, [size, mtime]] of Object.entries(inputs)) {
    const st = fs.statSync(new URL(file, cliDir), { throwIfNoEntry: false });
    if (!st || st.size !== size || Math.trunc(st.mtimeMs) !== mtime) return false;
  }
  return Object.keys(inputs).length > 0;
}
