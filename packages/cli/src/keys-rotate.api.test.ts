import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../test/support/cli';
import { freshStore } from '../../../test/support/fresh-store';
import { buildApp } from '../../server/src/app';
import { environmentSecrets, environments, organizations } from '../../server/src/db/schema/index';
import { parseConfig } from '../../server/src/env';
import {
  PREDICATE_TYPE,
  STATEMENT_TYPE,
  signStatement,
  verifyEnvelope,
} from '../../server/src/modules/proof/dsse';
import { listPublicKeys, signingKey } from '../../server/src/modules/proof/proof-keys';
import { resolveSecrets } from '../../server/src/modules/secrets/secrets.resolve';
import { bootstrap } from '../../server/src/modules/system/bootstrap';
import { openRuntime } from '../../server/src/runtime';

// `sluice keys rotate` works on the store itself, so the store is closed while the child runs
// (an embedded store belongs to one process at a time).
describe('sluice keys rotate', () => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  const masterKey = randomBytes(32).toString('base64');
  const values: Record<string, string> = {};
  const env = () => ({ ...store.env, SLUICE_MASTER_KEY: masterKey });
  const open = () =>
    openRuntime(parseConfig({ ...env(), SLUICE_LOG_LEVEL: 'warn' }), {
      logStream: new PassThrough(),
      supervise: false,
    });

  beforeAll(async () => {
    store = await freshStore();
    const rt = await open();
    try {
      const { api_key: token } = await bootstrap(rt.deps, { orgSlug: 'acme', email: 'owner@example.com' });
      const app = await buildApp(rt.deps);
      const call = (method: 'POST' | 'PUT', url: string, body: unknown) =>
        app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload: body as object });
      await call('POST', '/organizations/acme/environments', { name: 'Prod', slug: 'prod' });
      for (const key of ['DB_PASSWORD', 'API_TOKEN', 'WEBHOOK_SECRET']) {
        values[key] = `canary-${randomBytes(12).toString('hex')}`;
        const res = await call('PUT', `/organizations/acme/environments/prod/secrets/${key}`, {
          value: values[key],
        });
        expect(res.statusCode).toBe(201);
      }
      await app.close();
    } finally {
      await rt.close();
    }
  }, 120_000);
  afterAll(() => store?.drop());

  it('re-encrypts every secret under a new key; values stay readable', async () => {
    const r = await runCli(['keys', 'rotate', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toEqual({
      kid: expect.stringMatching(/^k-\d{8}-[a-z0-9]{8}$/),
      reencrypted: 4,
      tables: {
        environment_secret: 3,
        data_source_credential: 0,
        pipeline_run_input: 0,
        organization_oauth_grant: 0,
        oauth_authorization_request: 0,
        // Made at the first start, before any receipt (docs/proof.md).
        proof_signing_key: 1,
      },
    });
    for (const v of Object.values(values)) expect(r.stdout + r.stderr).not.toContain(v);

    // Without --json: a summary for people; running again is safe and picks yet another key.
    const again = await runCli(['keys', 'rotate'], { env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /new data key: k-\d{8}-[a-z0-9]{8}\nre-encrypted: 4\n {2}environment_secret: 3/,
    );
    const secondKid = /new data key: (\S+)/.exec(again.stdout)![1];
    expect(secondKid).not.toBe(report.kid);

    const rt = await open();
    try {
      const db = rt.deps.db;
      const [org] = await db.select().from(organizations).where(eq(organizations.slug, 'acme'));
      const [prod] = await db
        .select()
        .from(environments)
        .where(and(eq(environments.organizationId, org.id), eq(environments.slug, 'prod')));
      const rows = await db.select({ kid: environmentSecrets.kid }).from(environmentSecrets);
      expect(new Set(rows.map((row) => row.kid))).toEqual(new Set([secondKid]));
      expect(await resolveSecrets(db, rt.deps.keyring, org.id, prod.id)).toEqual(values);
    } finally {
      await rt.close();
    }
  }, 180_000);

  it('rotates the proof signing key: the retired key stays listed with its validity and verifies what it signed', async () => {
    const statement = {
      _type: STATEMENT_TYPE,
      predicateType: PREDICATE_TYPE,
      subject: [],
      predicate: { verdict: 'PASSED' },
    };
    let rt = await open();
    let signed: ReturnType<typeof signStatement>;
    let before: string;
    try {
      const key = await signingKey(rt.deps);
      before = key.keyid;
      signed = signStatement(statement, key.privateKey, key.keyid);
    } finally {
      await rt.close();
    }

    const r = await runCli(['keys', 'rotate-proof-key', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toEqual({ retired: before, keyid: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(report.keyid).not.toBe(before);

    rt = await open();
    try {
      const keys = await listPublicKeys(rt.deps.db);
      expect(keys.map((k) => [k.keyid, k.active])).toEqual([
        [report.keyid, true],
        [before, false],
      ]);
      const [current, retired] = keys;
      expect(current.valid_until).toBeNull();
      expect(retired.valid_until).toBe(current.valid_from);
      expect(Date.parse(retired.valid_from)).toBeLessThanOrEqual(Date.parse(retired.valid_until as string));
      // What the retired key signed still verifies against the listed keys; new receipts are
      // signed with the new key.
      expect(verifyEnvelope(signed, keys)).toMatchObject({ ok: true, keyid: before });
      expect(verifyEnvelope(signed, [current])).toMatchObject({ ok: false });
      expect((await signingKey(rt.deps)).keyid).toBe(report.keyid);
    } finally {
      await rt.close();
    }
  }, 180_000);

  it('refuses to run with the wrong master key', async () => {
    const r = await runCli(['keys', 'rotate', '--json'], {
      env: { ...env(), SLUICE_MASTER_KEY: randomBytes(32).toString('base64') },
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/could not be decrypted/);
  }, 120_000);
});
