import { connectors } from '@sluice/connectors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestApp, type TestApp } from '../../../../../test/support/app';

// Input that once answered 500: malformed URLs in URL-typed config fields (the credentials
// check of the URL field threw on what the URL check had already refused) and a lone UTF-16
// surrogate in a name (the event metadata insert failed). Both are the client's mistake: 400.

const MALFORMED = ['http://', 'http://[::1', 'not a url', 'https://exa mple.com', 'http://%zz'];

// A valid create body for every kind with a URL-typed config field.
const valid: Record<string, { config: Record<string, unknown>; credentials?: Record<string, unknown> }> = {
  http: { config: { base_url: 'https://api.example.com' }, credentials: {} },
  git: { config: { repo_url: 'https://git.example.com/acme/etl.git' }, credentials: { auth_type: 'https' } },
  salesforce: {
    config: { instance_url: 'https://acme.my.salesforce.com' },
    credentials: { client_id: 'c', client_secret: 's' },
  },
  snowflake: { config: { account: 'acme-x', username: 'ETL' }, credentials: { password: 'p' } },
  github: { config: { owner: 'acme', repo: 'etl' } },
  gitlab: { config: { project: 'acme/etl' } },
  s3: {
    config: { bucket: 'acme', region: 'eu-central-1' },
    credentials: { access_key_id: 'a', secret_access_key: 's' },
  },
};

/** Config fields that hold a URL, found from each connector's schema (so new ones join). */
function urlFields(): { type: string; field: string }[] {
  const out: { type: string; field: string }[] = [];
  for (const c of connectors) {
    const shape = (c.configSchema as any).shape as Record<string, z.ZodType>;
    for (const [field, schema] of Object.entries(shape)) {
      const json = JSON.stringify(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
      if (json.includes('"format":"uri"') || field.endsWith('_url') || field === 'endpoint')
        out.push({ type: c.type, field });
    }
  }
  return out;
}

describe('data sources: malformed input is 400, never 500', () => {
  let t: TestApp;
  let owner: string;
  const ds = '/organizations/acme/data-sources';
  beforeAll(async () => {
    t = await startTestApp({ env: { SLUICE_LOG_LEVEL: 'warn' } });
    owner = (await t.bootstrap('acme')).api_key;
  });
  afterAll(() => t?.close());

  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });

  it('refuses a malformed URL in every URL-typed config field, on create and on PATCH', async () => {
    const fields = urlFields();
    expect(fields.length).toBeGreaterThanOrEqual(8);
    for (const { type, field } of fields) {
      const base = valid[type];
      expect(base, `add a valid ${type} body to this test`).toBeDefined();
      const slug = `${type.replace(/_/g, '-')}-${field.replace(/_/g, '-')}`;
      const created = await call('POST', ds, { type, name: slug, slug, ...base });
      expect(created.statusCode, `${type}: ${created.body}`).toBe(201);
      for (const bad of MALFORMED) {
        const ctx = `${type}.${field} = ${JSON.stringify(bad)}`;
        const onCreate = await call('POST', ds, {
          type,
          name: 'bad',
          ...base,
          config: { ...base.config, [field]: bad },
        });
        expect(onCreate.statusCode, `${ctx}: ${onCreate.body}`).toBe(400);
        expect(onCreate.json().error.code).toBe('VALIDATION_FAILED');
        expect(onCreate.json().error.validation_errors.map((e: any) => e.path)).toContain(`config.${field}`);
        const onPatch = await call('PATCH', `${ds}/${slug}`, { config: { [field]: bad } });
        expect(onPatch.statusCode, `${ctx}: ${onPatch.body}`).toBe(400);
        expect(onPatch.json().error.validation_errors.map((e: any) => e.path)).toContain(`config.${field}`);
      }
    }
  });

  it('refuses a lone UTF-16 surrogate with the path of the field', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/organizations/acme/projects', '{"name":"a\\ud800b"}'],
      [
        'POST',
        ds,
        '{"type":"http","name":"x\\udc00","config":{"base_url":"https://a.example"},"credentials":{}}',
      ],
      ['POST', '/organizations/acme/projects', '{"name":"ok","description":"\\udbff"}'],
      ['POST', '/organizations/acme/projects', '{"name":"ok","\\ud800":1}'],
    ];
    const paths = ['name', 'name', 'description', '\uFFFD'];
    for (const [i, [method, url, body]] of cases.entries()) {
      const res = await t.call(method, url, { token: owner, body });
      expect(res.statusCode, res.body).toBe(400);
      const err = res.json().error;
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.request_id).toBe(res.headers['x-request-id']);
      expect(err.validation_errors[0]).toMatchObject({ path: paths[i], code: 'invalid_unicode' });
    }
    // A well-formed pair (an emoji) is fine.
    const ok = await t.call('POST', '/organizations/acme/projects', {
      token: owner,
      body: '{"name":"rocket \\ud83d\\ude80"}',
    });
    expect(ok.statusCode, ok.body).toBe(201);
  });
});
