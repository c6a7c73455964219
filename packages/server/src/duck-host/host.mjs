// The process of the server's own DuckDB (duck-host/client.ts starts it): parsing transform SQL at
// validation, dry-binding it for drift. Plain JavaScript, so it starts the same under the compiled
// CLI, tsx and the tests. It answers one message per request over the IPC channel and ends when the
// channel closes: when its parent stops it after an idle spell, or when its parent is gone.
//
//   { id, op: 'open' }                      → { id, ok: handle }   an empty in-memory database
//   { id, op: 'run', handle, sql, params }  → { id, ok: rows }     rows as arrays of JSON values
//   { id, op: 'close', handle }             → { id, ok: null }
//   any request when DuckDB cannot be loaded → { id, unavailable: message }
//   a failed statement                       → { id, error: message }
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

let duck = null;
let unavailable = null;
try {
  duck = require('@duckdb/node-api');
} catch (err) {
  unavailable = String(err?.message ?? err);
}

/** handle → { instance, conn } */
const sessions = new Map();
let nextHandle = 1;

/** DuckDB values as JSON: BIGINT and HUGEINT as text, its value classes (lists, dates) as their text. */
const plain = (v) =>
  v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : String(v);

async function open() {
  const instance = await duck.DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: '1',
  });
  const conn = await instance.connect();
  // No file, URL or extension is reachable from the SQL checked here.
  await conn.run('SET enable_external_access = false');
  const handle = nextHandle++;
  sessions.set(handle, { instance, conn });
  return handle;
}

function session(handle) {
  const s = sessions.get(handle);
  if (!s) throw new Error(`no DuckDB session ${handle} in this process`);
  return s;
}

async function answer(msg) {
  if (unavailable !== null) return { id: msg.id, unavailable };
  try {
    switch (msg.op) {
      case 'open':
        return { id: msg.id, ok: await open() };
      case 'run': {
        const reader = await session(msg.handle).conn.runAndReadAll(msg.sql, msg.params ?? []);
        return { id: msg.id, ok: reader.getRows().map((row) => row.map(plain)) };
      }
      case 'close': {
        const s = sessions.get(msg.handle);
        sessions.delete(msg.handle);
        if (s) {
          s.conn.closeSync();
          s.instance.closeSync();
        }
        return { id: msg.id, ok: null };
      }
      default:
        return { id: msg.id, error: `unknown request ${msg.op}` };
    }
  } catch (err) {
    return { id: msg.id, error: String(err?.message ?? err) };
  }
}

process.on('message', (msg) => {
  answer(msg).then((reply) => {
    if (process.connected) process.send(reply);
  });
});
process.on('disconnect', () => process.exit(0));
