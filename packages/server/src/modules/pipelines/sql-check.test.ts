import { afterEach, describe, expect, it } from 'vitest';
import { DuckHost } from '../../duck-host/client';
import { checkSql } from './sql-check';

// Transform SQL checked by DuckDB's parser in the server's DuckDB process (duck-host/client.ts).

const hosts: DuckHost[] = [];
const host = () => {
  const h = new DuckHost();
  hosts.push(h);
  return h;
};
afterEach(() => {
  for (const h of hosts.splice(0)) h.stop();
});

describe('checkSql', () => {
  it('leaves SQL unchecked, not failed, when the child stops while it checks it', async () => {
    const h = host();
    const checking = checkSql('SELECT 1', h);
    process.kill(h.pid!, 'SIGKILL');
    expect(await checking).toMatchObject({ ok: null, unavailable: false });
    expect(await checkSql('SELECT 1', h)).toEqual({ ok: true });
    expect(await checkSql('SELECT 1; SELECT 2', h)).toEqual({
      ok: false,
      message: 'a transform is exactly one SELECT query',
    });
  });
});
