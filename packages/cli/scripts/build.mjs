// Compiles the CLI and the workspace packages it runs (server, engine, connectors, client) into
// one ES module graph under packages/cli/dist, so `sluice serve` and `sluice worker` start
// without the TypeScript loader (tsx keeps a second V8 isolate, its transform cache and every
// module's inline source map resident: about 55 MB). Dependencies in node_modules stay external
// and load as usual; modules imported with import() stay separate chunks and still load on
// first use. bin/sluice.mjs runs the build only while dist/inputs.json matches the sources
// (see bin/fresh.mjs); otherwise it runs the sources through tsx as before.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(cliDir, '../..');
const outdir = path.join(cliDir, 'dist');
const staging = path.join(cliDir, `.dist-${process.pid}`);

/**
 * The pure-JavaScript packages an idle `sluice serve` loads, compiled in minified with everything
 * they import from node_modules (but NOT_BUNDLED): V8 keeps every loaded module's source text in
 * its heap for the life of the process, and these sources are large, commented and partly stored
 * as UTF-16 (one non-Latin-1 character anywhere makes a whole file two bytes a character), where
 * the minified ASCII output is a fraction of that (docs/benchmarks.md, Memory). Every importer of
 * one of them must be compiled in too, or two copies would load.
 */
const BUNDLED = new Set([
  'zod',
  'fastify',
  'fastify-type-provider-zod',
  '@fastify/rate-limit',
  '@fastify/swagger',
  'drizzle-orm',
  'commander',
  'yaml',
  'prom-client',
  'fast-json-stringify',
  'secure-json-parse',
  'croner',
  'ipaddr.js',
  'openapi-fetch',
]);
/**
 * Never compiled in, even when a bundled package imports them: native modules and packages that
 * find files beside themselves (PGlite's WebAssembly, pino's worker threads), pg (its optional
 * pg-native, and one copy for drizzle, pg-boss and the connectors), pg-boss (jobs/queue.ts sets
 * the luxon that its cron-parser requires).
 */
const NOT_BUNDLED = new Set(['@electric-sql/pglite', 'pg', 'pg-native', 'pino', 'pg-boss']);
// (@fastify/cookie stays out too: it loads `cookie`, a CommonJS module, with import(), whose
// named exports a bundle would not give it.)

const packageName = (spec) => spec.split('/', spec.startsWith('@') ? 2 : 1).join('/');

/** Workspace packages and BUNDLED are compiled in; everything else stays an import. */
const workspaceOnly = {
  name: 'workspace-only',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@sluice/') || args.path.startsWith('node:')) return undefined;
      const name = packageName(args.path);
      const fromDependency = args.importer.includes(`${path.sep}node_modules${path.sep}`);
      if (!NOT_BUNDLED.has(name) && (BUNDLED.has(name) || fromDependency)) return undefined;
      return { path: args.path, external: true };
    });
    // A module that finds files beside itself (migrations, the web build, package.json) keeps
    // finding them: its import.meta.url becomes the source file's URL, relative to the chunk.
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = fs.readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return { contents: source, loader: 'ts' };
      const rel = path.relative(outdir, args.path).split(path.sep).join('/');
      return {
        contents: source.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(rel)}, import.meta.url).href`,
        ),
        loader: 'ts',
      };
    });
  },
};

fs.rmSync(staging, { recursive: true, force: true });
let result;
let inputs;
try {
  result = await esbuild.build({
    entryPoints: { main: path.join(cliDir, 'src/run.ts') },
    absWorkingDir: repoRoot,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: staging,
    sourcemap: 'linked',
    // Whitespace and syntax only: identifiers keep their source names, so functions and classes
    // keep theirs (error names, plugin names, stack traces; a top-level name two modules of one
    // chunk share gets a numeric suffix in the second) without esbuild's keepNames, which wraps
    // every function and class in a call that defines its `name` property again: that held ~3 MB
    // more of an idle `serve` than the longer identifiers do (docs/benchmarks.md, Memory).
    minifyWhitespace: true,
    minifySyntax: true,
    // Comments and non-ASCII characters are what make V8 keep a source as UTF-16.
    charset: 'ascii',
    legalComments: 'linked',
    // The CommonJS packages compiled in call require() for node: modules and the externals.
    banner: {
      js: "import { createRequire as __sluiceCreateRequire } from 'node:module'; const require = __sluiceCreateRequire(import.meta.url);",
    },
    metafile: true,
    logLevel: 'warning',
    plugins: [workspaceOnly],
  });

  // The inputs with their size and modification time: bin/fresh.mjs compares them at start.
  inputs = {};
  for (const rel of Object.keys(result.metafile.inputs)) {
    const file = path.resolve(repoRoot, rel);
    if (!file.startsWith(repoRoot + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`))
      continue;
    const st = fs.statSync(file);
    inputs[path.relative(cliDir, file)] = [st.size, Math.trunc(st.mtimeMs)];
  }
  fs.writeFileSync(path.join(staging, 'inputs.json'), `${JSON.stringify(inputs)}\n`);
} catch (err) {
  fs.rmSync(staging, { recursive: true, force: true });
  throw err;
}

// Swap in the new build whole, so a process starting meanwhile sees the old or the new one.
const old = path.join(cliDir, `.dist-old-${process.pid}`);
if (fs.existsSync(outdir)) fs.renameSync(outdir, old);
fs.renameSync(staging, outdir);
fs.rmSync(old, { recursive: true, force: true });
console.log(
  `sluice: compiled ${Object.keys(inputs).length} source files into ${path.relative(repoRoot, outdir)}`,
);
