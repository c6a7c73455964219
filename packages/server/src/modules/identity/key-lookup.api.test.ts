import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { createUser } from '../../../../../test/support/users';
import type { Store } from '../../db/client';
import { hashToken } from '../../http/tokens';
import { lookupKey } from './key-lookup';

// API-key lookups asked for in one turn of the event loop share one query; each request still
// gets its own key's row, and no lookup joins a query sent before it was asked for.
describe('API key lookups', () => {
  let t: TestApp;
  let acme: string;
  let globex: string;
  let doomed: string;
  /** The test app's store, with every lookup query's hashes recorded. */
  let store: Pick<Store, 'prepared'>;
  const sent: string[][] = [];

  beforeAll(async () => {
    t = await startTestApp();
    acme = (await t.bootstrap('acme')).api_key;
    const other = await createUser(t);
    await t.call('POST', '/organizations', { token: other.token, body: { name: 'Globex', slug: 'globex' } });
    const key = (org: string, token: string, name: string) =>
      t.call('POST', `/organizations/${org}/api-keys`, { token, body: { name, role: 'viewer' } });
    globex = (await key('globex', other.token, 'globex')).json().token;
    doomed = (await key('acme', acme, 'doomed')).json().token;
    const real = t.rt.deps.store;
    store = {
      prepared: (name, text, values) => {
        sent.push([...(values[0] as string[])].sort());
        return real.prepared(name, text, values);
      },
    };
  });
  afterAll(() => t?.close());

  it('answers the lookups of one turn from one query, each with its own key', async () => {
    sent.length = 0;
    const hashes = [acme, globex, acme, 'slc_key_unknown', acme].map(hashToken);
    const rows = await Promise.all(hashes.map((h) => lookupKey(store, h)));
    expect(sent).toEqual([[...new Set(hashes)].sort()]);
    expect(rows.map((r) => r?.org_slug)).toEqual(['acme', 'globex', 'acme', undefined, 'acme']);
    expect(rows.map((r) => r?.token_hash)).toEqual(hashes.map((h, i) => (i === 3 ? undefined : h)));
    // Requests of the same key share its row.
    expect(rows[0]).toBe(rows[2]);
  });

  it('sends the lookups of later turns in queries of their own', async () => {
    sent.length = 0;
    await lookupKey(store, hashToken(acme));
    await lookupKey(store, hashToken(acme));
    expect(sent).toEqual([[hashToken(acme)], [hashToken(acme)]]);
  });

  it('never answers a lookup from a query sent before it: a key revoked in between is refused', async () => {
    const before = lookupKey(store, hashToken(doomed));
    await new Promise((r) => setImmediate(r)); // that lookup's query is on its way now
    const revoked = await t.call('POST', '/organizations/acme/api-keys/doomed:revoke', { token: acme });
    expect(revoked.statusCode).toBe(200);
    const after = await lookupKey(store, hashToken(doomed));
    expect((await before)?.slug).toBe('doomed');
    expect(after?.revoked_at).toBeInstanceOf(Date);
  });

  it('gives each of many concurrent requests its own standing', async () => {
    const asks = Array.from({ length: 30 }, (_, i) => [acme, globex, doomed][i % 3]);
    const answers = await Promise.all(
      asks.map((token) => t.call('GET', '/organizations/acme/events?limit=1', { token })),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(
      asks.map((token) => (token === acme ? 200 : token === globex ? 404 : 401)),
    );
  });
});
