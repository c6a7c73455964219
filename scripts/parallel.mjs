// Runs each argument as a shell command at the same time and fails when any fails, printing
// each command's output once it ends (not interleaved). `npm run check` uses it: the two
// typechecks and the lint share nothing, and on a 2-core machine they finish together in the
// time of the longest (README "Install, check and run all tests").
import { spawn } from 'node:child_process';

const commands = process.argv.slice(2);
const results = await Promise.all(
  commands.map(
    (command) =>
      new Promise((resolve) => {
        const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
        const out = [];
        child.stdout.on('data', (c) => out.push(c));
        child.stderr.on('data', (c) => out.push(c));
        child.on('close', (code, signal) => {
          process.stdout.write(`$ ${command}\n${Buffer.concat(out).toString()}`);
          if (code !== 0) process.stdout.write(`(exit ${code ?? signal})\n`);
          resolve(code === 0);
        });
      }),
  ),
);
process.exit(results.every(Boolean) ? 0 : 1);
