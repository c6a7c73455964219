import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpPeer, startSmtpPeer } from '../../../../../test/peers/smtp';
import { scratchRuntime } from '../../../../../test/pipelines/support';
import { pgQuery, pgUrl, waitUntil } from '../../../../../test/support/runs';
import { parseConfig } from '../../env';
import { startWorker } from '../../jobs/worker';
import { openRuntime, type Runtime } from '../../runtime';
import { raiseNotification } from '../notifications/notifications.raise';

// Two worker processes' worth of runtimes on one PostgreSQL server, racing on the same
// notifications: concurrent occurrences of one dedup key and duplicated dispatch jobs. The send
// gate must let exactly one message per (notification, destination) through.

const DB = `sluice_alert_workers_${process.pid}_${randomBytes(3).toString('hex')}`;
const NOTIFICATIONS = 8;

describe('alert delivery with two workers on one PostgreSQL server', () => {
  let smtp: SmtpPeer;
  let one: Awaited<ReturnType<typeof scratchRuntime>>;
  let two: Runtime;

  beforeAll(async () => {
    smtp = await startSmtpPeer();
    const env = { SLUICE_SMTP_URL: smtp.url };
    one = await scratchRuntime(DB, { worker: true, env });
    two = await openRuntime(
      parseConfig({
        DATABASE_URL: pgUrl(DB),
        SLUICE_MASTER_KEY: one.rt.deps.config.masterKey,
        SLUICE_QUEUE_POLL_SECONDS: '0.5',
        SLUICE_LOG_LEVEL: 'silent',
        ...env,
      }),
      { supervise: false, logStream: new PassThrough() },
    );
    await startWorker(two.deps, { concurrency: 2 });
    const org = '/organizations/acme';
    for (const d of ['ops', 'team']) {
      const res = await one.call('POST', `${org}/alert-destinations`, {
        name: d,
        slug: d,
        type: 'email',
        non_secret_config: { recipients: [`${d}@example.com`] },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    for (const [name, dests] of [
      ['A', ['ops']],
      ['B', ['ops', 'team']],
    ] as const) {
      const res = await one.call('POST', `${org}/alert-policies`, {
        name,
        scope: 'organization',
        destination_slugs: dests,
      });
      expect(res.statusCode, res.body).toBe(201);
    }
  }, 120_000);
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await smtp?.close();
    await pgQuery('postgres', `drop database if exists ${DB} with (force)`).catch(() => {});
  });

  it('sends exactly one message per notification and destination', async () => {
    const [{ id: orgId }] = await pgQuery(DB, `select id from organizations where slug = 'acme'`);
    const raise = (rt: Runtime, i: number, key: string) =>
      rt.deps.db.transaction((tx) =>
        raiseNotification(tx, rt.deps, {
          organizationId: orgId,
          type: 'pipeline_run_failed',
          severity: 'error',
          title: `Pipeline p${i} failed`,
          summary: 'failed',
          projectSlug: 'shop',
          environmentSlug: 'prod',
          subject: { kind: 'pipeline', slug: `p${i}` },
          sourceKind: 'pipeline_run',
          sourceAction: 'update',
          sourceRefs: [{ kind: 'pipeline', value: `p${i}` }],
          sourceKey: key,
        }),
      );
    const runtimes = [one.rt, two];
    await Promise.all(
      Array.from({ length: NOTIFICATIONS }, (_, i) =>
        Promise.all([raise(one.rt, i, `a${i}`), raise(two, i, `b${i}`), raise(two, i, `a${i}`)]),
      ),
    );
    // Redelivered/duplicated dispatch jobs for every notification, enqueued from both processes.
    const rows = await pgQuery(DB, 'select id from notifications');
    expect(rows).toHaveLength(NOTIFICATIONS);
    await Promise.all(
      rows.flatMap((r: any) =>
        runtimes.flatMap((rt) =>
          [1, 2].map(() =>
            rt.deps.queue.enqueue(null, 'alerts.dispatch', { notificationId: r.id, seq: 1, reason: 'open' }),
          ),
        ),
      ),
    );
    await waitUntil(
      () =>
        pgQuery(
          DB,
          `select count(*)::int as n from pgboss.job
                      where name like 'alerts.%' and state in ('created', 'retry', 'active')`,
        ),
      (r) => r[0].n === 0,
      60_000,
    );
    const counts = await pgQuery(DB, 'select occurrence_count from notifications');
    expect(counts.every((c: any) => c.occurrence_count === 2)).toBe(true);
    expect(smtp.messages).toHaveLength(NOTIFICATIONS * 2);
    const pairs = new Set(smtp.messages.map((m) => `${m.subject}|${m.envelope.to.join(',')}`));
    expect(pairs.size).toBe(NOTIFICATIONS * 2);
    const [att] = await pgQuery(
      DB,
      `select count(*)::int as n, count(distinct (notification_id, destination_id))::int as d
                                       from alert_delivery_attempts`,
    );
    expect(att).toEqual({ n: NOTIFICATIONS * 2, d: NOTIFICATIONS * 2 });
  }, 120_000);
});
