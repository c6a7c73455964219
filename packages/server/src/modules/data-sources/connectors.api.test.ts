import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';

describe('connector catalog', { timeout: 60_000 }, () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    token = (await t.bootstrap('acme')).api_key;
  }, 120_000);
  afterAll(async () => t?.close());

  it('describes every connector with the JSON Schemas of its config and credentials', async () => {
    const res = await t.call('GET', '/connectors', { token });
    expect(res.statusCode).toBe(200);
    const pg = res.json().connectors.find((c: { type: string }) => c.type === 'postgres');
    expect(pg).toMatchObject({ label: 'PostgreSQL', credentials_required: false, default_read_only: false });
    expect(pg.config_schema.required).toEqual(['host', 'database', 'user']);
    expect(pg.config_schema.properties.port).toMatchObject({ type: 'integer', default: 5432 });
    expect(pg.credentials_schema.properties.password.type).toBe('string');
    expect(res.json().connectors.length).toBeGreaterThan(5);
    expect((await t.call('GET', '/connectors')).statusCode).toBe(401);
  });
});
