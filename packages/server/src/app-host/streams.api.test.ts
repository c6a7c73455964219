import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCookieOf } from '../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { pushLogsPipeline } from '../../../../test/support/runs';
import { openSse } from '../../../../test/support/sse';
import { addMember, createUser } from '../../../../test/support/users';
import { sessions } from '../db/schema/index';
import { hashToken } from '../http/tokens';
import { setUserPassword } from '../modules/identity/set-password';
import { buildAppHost } from './app-host';

const PE = '/api/organizations/acme/projects/logs/environments/dev';

// An app host's event streams last only as long as their session and the member's read access,
// and each session and user may hold only so many (docs/operations.md "Event streams on the app host").
// Real HTTP connections: a stream never ends by itself, so light-my-request cannot hold one.
describe('app host event streams end with their session', { timeout: 60_000 }, () => {
  let t: TestApp;
  let host: FastifyInstance;
  let base: string;
  let ownerKey: string;
  const api = (method: string, url: string, body?: unknown) => t.call(method, url, { token: ownerKey, body });

  /** A new member of acme with a browser session on `on`. */
  const member = async (role: string, on = host) => {
    const user = await createUser(t);
    const password = `pw-${user.slug}-long-enough`;
    await setUserPassword(t.rt.deps, { email: user.email, password });
    await addMember(t, 'acme', user, role);
    const session = await signIn(user.email, password, on);
    return { ...user, password, ...session };
  };
  const signIn = async (email: string, password: string, on = host) => {
    const res = await on.inject({ method: 'POST', url: '/session', payload: { email, password } });
    expect(res.statusCode, res.body).toBe(201);
    return { cookie: sessionCookieOf(res), csrf: res.json().csrf_token as string };
  };
  const signOut = (s: { cookie: string; csrf: string }, on = host) =>
    on.inject({
      method: 'DELETE',
      url: '/session',
      cookies: { sluice_session: s.cookie },
      headers: { 'x-csrf-token': s.csrf },
    });
  const stream = (s: { cookie: string }, path = `${PE}/runs-stream`, url = base) =>
    openSse(`${url}${path}`, { cookie: `sluice_session=${s.cookie}` });
  const logStream = (s: { cookie: string }) => stream(s, `${PE}/runs/r1/log-stream`);

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        // Short, so that the cases below need no long waits; the default is 5 s.
        SLUICE_STREAM_RECHECK_SECONDS: '0.1',
        SLUICE_STREAMS_PER_SESSION: '2',
        SLUICE_STREAMS_PER_USER: '3',
      },
    });
    host = await buildAppHost(t.rt.deps);
    base = await host.listen({ host: '127.0.0.1', port: 0 });
    ownerKey = (await t.bootstrap('acme')).api_key;
    const ok = async (method: string, url: string, body?: unknown) => {
      const r = await api(method, url, body);
      expect(r.statusCode, r.body).toBeLessThan(300);
      return r.json();
    };
    const version = await pushLogsPipeline(ok);
    // A running run, written as a worker would: its log stream stays open until told otherwise.
    await t.rt.deps.db.execute(sql`
      insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, state, started_at)
      select p.organization_id, p.id, e.id, 'r1', ${version.spec_hash}, 'running', now()
      from pipelines p join environments e on e.organization_id = p.organization_id
      where p.slug = 'pl' and e.slug = 'dev'`);
    await t.rt.deps.db.execute(sql`
      insert into pipeline_run_logs (run_id, seq, last_seq, lines)
      select r.id, 1, 3, jsonb_agg(jsonb_build_array('src', 'info', 'line ' || g, 0) order by g)
        from pipeline_runs r, generate_series(1, 3) g where r.slug = 'r1' group by r.id`);
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await t?.close();
  });

  it('sign-out ends every open stream of that session at once, with the reason', async () => {
    const dana = await member('viewer');
    const runs = await stream(dana);
    const log = await logStream(dana);
    expect(runs.status).toBe(200);
    expect(runs.headers['content-type']).toMatch(/text\/event-stream/);
    // While the session lasts the streams carry data and do not end.
    expect((await runs.waitFor('runs')).data.map((r: { slug: string }) => r.slug)).toEqual(['r1']);
    expect((await log.waitFor('logs')).data).toHaveLength(3);
    await runs.waitFor('ping');
    expect(runs.events.some((e) => e.event === 'end')).toBe(false);

    expect((await signOut(dana)).statusCode).toBe(204);
    // Ended by the sign-out itself, before its deletion committed: a re-check, which could only
    // find the session gone, would have said session_ended.
    for (const s of [runs, log]) {
      expect((await s.waitFor('end')).data).toEqual({ reason: 'signed_out' });
      await s.closed;
      expect(s.events.filter((e) => e.event === 'end')).toHaveLength(1);
    }
    // The cookie is worth nothing now, streams included.
    const again = await stream(dana);
    expect(again.status).toBe(401);
    expect(again.json.error.code).toBe('UNAUTHENTICATED');
  });

  it('a sign-out on another app host ends the stream at its re-check; closing a host ends its streams', async () => {
    const other = await buildAppHost(t.rt.deps);
    const otherBase = await other.listen({ host: '127.0.0.1', port: 0 });
    let closing: Promise<void> | undefined;
    try {
      const erin = await member('viewer');
      const there = await stream(erin, `${PE}/runs-stream`, otherBase);
      await there.waitFor('runs');
      expect((await signOut(erin)).statusCode).toBe(204);
      // That host did not see the sign-out: its re-check finds the session gone.
      expect((await there.waitFor('end')).data).toEqual({ reason: 'session_ended' });
      await there.closed;

      const fay = await member('viewer');
      const open = await stream(fay, `${PE}/runs-stream`, otherBase);
      await open.waitFor('runs');
      closing = other.close();
      expect((await open.waitFor('end')).data).toEqual({ reason: 'shutting_down' });
      await closing;
    } finally {
      if (!closing) await other.close();
    }
  });

  it('ends the stream when the session expires', async () => {
    const gus = await member('operator');
    const runs = await stream(gus);
    const log = await logStream(gus);
    await runs.waitFor('runs');
    await log.waitFor('logs');
    // Expiry is the database's clock against the stored end (sessions.repo.ts): move the end.
    await t.rt.deps.db
      .update(sessions)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(sessions.tokenHash, hashToken(gus.cookie)));
    expect((await runs.waitFor('end')).data).toEqual({ reason: 'session_expired' });
    expect((await log.waitFor('end')).data).toEqual({ reason: 'session_expired' });
    await runs.closed;
  });

  it('ends the stream when the member is removed from the organization', async () => {
    const hal = await member('developer');
    const runs = await stream(hal);
    const log = await logStream(hal);
    await runs.waitFor('runs');
    await log.waitFor('logs');
    const removed = await api('DELETE', `/organizations/acme/members/${hal.slug}`);
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await runs.waitFor('end')).data).toEqual({ reason: 'access_revoked' });
    expect((await log.waitFor('end')).data).toEqual({ reason: 'access_revoked' });
    // The session itself goes on: only this organization's streams ended.
    const who = await host.inject({
      method: 'GET',
      url: '/session',
      cookies: { sluice_session: hal.cookie },
    });
    expect(who.statusCode).toBe(200);
  });

  it('ends the stream when the member gets a role without read access, or the role loses it', async () => {
    const role = await api('POST', '/organizations/acme/roles', {
      name: 'Run reader',
      slug: 'run-reader',
      permissions: ['organizations.read', 'pipelines.read'],
    });
    expect(role.statusCode, role.body).toBe(201);
    const none = await api('POST', '/organizations/acme/roles', {
      name: 'Roster',
      slug: 'roster',
      permissions: ['organizations.read', 'members.read'],
    });
    expect(none.statusCode, none.body).toBe(201);

    // The member's role changes to one that does not read runs.
    const ivy = await member('run-reader');
    const runs = await stream(ivy);
    await runs.waitFor('runs');
    const changed = await api('PATCH', `/organizations/acme/members/${ivy.slug}`, { role: 'roster' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await runs.waitFor('end')).data).toEqual({ reason: 'access_revoked' });

    // The role keeps its name and loses the permission.
    const jo = await member('run-reader');
    const log = await logStream(jo);
    await log.waitFor('logs');
    const edited = await api('PATCH', '/organizations/acme/roles/run-reader', {
      permissions: ['organizations.read'],
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect((await log.waitFor('end')).data).toEqual({ reason: 'access_revoked' });
  });

  it('caps open streams per session and per user with 429 RATE_LIMITED, and frees a slot when a stream closes', async () => {
    const kim = await member('viewer');
    const first = await stream(kim);
    const second = await stream(kim);
    await first.waitFor('runs');
    await second.waitFor('runs');
    // A third on the same session (the cap here is 2 per session, 3 per user).
    const third = await stream(kim, `${PE}/runs/r1/log-stream`);
    expect(third.status).toBe(429);
    expect(third.json.error).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'at most 2 event streams may be open per session; close one first',
    });
    expect(third.json.error.request_id).toBe(third.headers['x-request-id']);
    expect(third.headers['retry-after']).toBe('1');

    // Another session of the same user has its own 2, but the user has only 3 in all.
    const tab = await signIn(kim.email, kim.password);
    const fourth = await stream(tab);
    expect(fourth.status).toBe(200);
    const fifth = await stream(tab);
    expect(fifth.status).toBe(429);
    expect(fifth.json.error.message).toBe('at most 3 event streams may be open per user; close one first');
    // Another user is not affected.
    const lee = await member('viewer');
    const theirs = await stream(lee);
    expect(theirs.status).toBe(200);
    theirs.close();

    // Closing a stream (the tab goes away) gives its slot back.
    first.close();
    const reopened = await retry(
      () => stream(tab),
      (s) => s.status === 200,
    );
    expect(reopened.status).toBe(200);
    await reopened.waitFor('runs');
    // Signing out gives back every slot of the session: the user may open streams on a new one.
    expect((await signOut(tab)).statusCode).toBe(204);
    await reopened.closed;
    const fresh = await signIn(kim.email, kim.password);
    const later = await stream(fresh);
    expect(later.status).toBe(200);
    for (const s of [second, later]) s.close();
  });
});

/** Tries again until the answer is the one wanted: a closed connection reaches the server a little later. */
async function retry<T>(attempt: () => Promise<T>, good: (v: T) => boolean, tries = 50): Promise<T> {
  let last = await attempt();
  for (let i = 1; i < tries && !good(last); i++) {
    await new Promise((r) => setTimeout(r, 100));
    last = await attempt();
  }
  return last;
}
