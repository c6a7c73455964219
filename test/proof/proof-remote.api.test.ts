import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';

// Enabling proof reads the live repository's id; when the repository cannot be reached that is
// the remote's failure, 502 REMOTE_FAILED with the connector's code, never our own 503.

/** A local port nothing listens on: bound once, then closed, so a connection is refused. */
async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('proof settings against an unreachable repository', { timeout: 60_000 }, () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    token = (await t.bootstrap('acme')).api_key;
  }, 120_000);
  afterAll(() => t?.close());

  it('answers 502 REMOTE_FAILED with the connector code, and keeps no settings', async () => {
    const port = await refusedPort();
    const ds = await t.call('POST', '/organizations/acme/data-sources', {
      token,
      body: {
        type: 'git',
        name: 'gone',
        slug: 'gone',
        config: { repo_url: `https://127.0.0.1:${port}/gone.git`, allow_private_hosts: true },
        credentials: { auth_type: 'https', username: 'sluice', token: 'never-sent-anywhere' },
      },
    });
    expect(ds.statusCode, ds.body).toBe(201);
    const url = '/organizations/acme/data-sources/gone/proof-settings';
    const res = await t.call('PUT', url, {
      token,
      body: { enabled: true, publish_checks: false, expected_repository_id: 'a'.repeat(40), targets: [] },
    });
    expect(res.statusCode, res.body).toBe(502);
    expect(res.json().error).toMatchObject({
      code: 'REMOTE_FAILED',
      message: expect.stringContaining('the repository id could not be read'),
      detailed_error: expect.stringMatching(/^[A-Z_]+$/),
    });
    expect(res.body).not.toContain('never-sent-anywhere');
    // Nothing was saved: enabling failed before the write.
    const after = await t.call('PUT', url, {
      token,
      body: { enabled: false, publish_checks: false, expected_repository_id: 'a'.repeat(40), targets: [] },
    });
    expect(after.statusCode, after.body).toBe(201);
  });
});
