import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../context';
import { access } from '../http/access';
import { scopeOf } from '../http/auth';
import type { TypedApp } from '../http/typed-app';
import {
  getRun,
  listLogs,
  listRuns,
  logCursorAfter,
  type RunState,
  runParams,
  runStates,
  envParams as runsEnvParams,
  terminalRunStates,
} from '../modules/runs/index';
import { openEventStream, type StreamRegistry } from './event-stream';

const pe = '/organizations/:organization/projects/:project/environments/:environment';
const POLL_MS = 700;
const LOG_BATCH = 100;
// What every stream (and the log download) needs, when it opens and for as long as it lasts.
const READ = 'pipelines.read';

const runsStreamQuery = z
  .object({
    pipeline_slug: z.string().max(100).optional().describe('Only runs of this pipeline.'),
    state: z.enum(runStates).optional().describe('Only runs in this state.'),
  })
  .strict();

const logStreamQuery = z
  .object({
    after_id: z.coerce.number().int().min(0).optional().describe('Send lines after this line number (seq).'),
  })
  .strict();

/**
 * Server-sent events for the browser: the live run list and a run's log tail. They read through
 * the same services as the JSON routes; the stream only remembers what it already sent, so a
 * reconnecting browser resumes from Last-Event-ID instead of downloading the log again. Each
 * stream lasts only as long as its session and the member's read access (event-stream.ts).
 */
export function streamRoutes(app: TypedApp, deps: Deps, registry: StreamRegistry) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const open = (req: FastifyRequest, reply: FastifyReply) =>
    openEventStream(req, reply, { deps, registry, orgSlug: scopeOf(req).org.slug, permission: READ });

  app.get(`${pe}/runs-stream`, {
    config: access.org(READ),
    schema: { hide: true, params: runsEnvParams, querystring: runsStreamQuery },
    handler: async (req, reply) => {
      const scope = scopeOf(req);
      // An unknown project or environment is a plain 404, before the stream opens.
      await listRuns(ctx(req), scope, req.params, {
        limit: 1,
        sort_by: 'run_created_at',
        order: 'desc',
        direction: 'next',
      });
      const s = open(req, reply);
      const seen = new Map<string, string>();
      while (s.isOpen()) {
        try {
          const page = await listRuns(ctx(req), scope, req.params, {
            limit: 100,
            sort_by: 'run_created_at',
            order: 'desc',
            direction: 'next',
            ...req.query,
          });
          const changed = page.items.filter((r) => {
            const json = JSON.stringify(r);
            if (seen.get(r.slug) === json) return false;
            seen.set(r.slug, json);
            return true;
          });
          if (changed.length > 0) await s.send('runs', changed);
          else await s.send('ping', {});
        } catch (err) {
          req.log.warn({ err }, 'run list stream ended');
          s.close();
          return;
        }
        await s.sleep(POLL_MS);
      }
    },
  });

  app.get(`${pe}/runs/:run_slug/log-stream`, {
    config: access.org(READ),
    schema: { hide: true, params: runParams, querystring: logStreamQuery },
    handler: async (req, reply) => {
      const scope = scopeOf(req);
      const lastEventId = Number(req.headers['last-event-id']);
      let after = Number.isInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (req.query.after_id ?? 0);
      // An unknown run is a plain 404, before the stream opens.
      await getRun(ctx(req), scope, req.params, req.params.run_slug);
      const s = open(req, reply);
      let runJson = '';
      while (s.isOpen()) {
        try {
          const run = await getRun(ctx(req), scope, req.params, req.params.run_slug);
          const json = JSON.stringify(run);
          if (json !== runJson) {
            runJson = json;
            await s.send('run', run);
          }
          // Drain everything written so far, a batch per event, then wait for more.
          for (;;) {
            const page = await listLogs(ctx(req), scope, req.params, req.params.run_slug, {
              limit: LOG_BATCH,
              sort_by: 'log_seq',
              order: 'asc',
              direction: 'next',
              ...(after > 0 ? { cursor: logCursorAfter(after) } : {}),
            });
            if (page.items.length === 0) break;
            after = page.items[page.items.length - 1].seq;
            if (!(await s.send('logs', page.items, after)) || !page.has_more) break;
          }
          if (!s.isOpen()) return;
          if (terminalRunStates.includes(run.state as RunState)) {
            s.end('run_finished', { state: run.state });
            return;
          }
          await s.send('ping', {});
        } catch (err) {
          req.log.warn({ err }, 'log stream ended');
          s.close();
          return;
        }
        await s.sleep(POLL_MS);
      }
    },
  });

  // The whole log as text, read page by page so a long log never sits in memory at once.
  app.get(`${pe}/runs/:run_slug/log-download`, {
    config: access.org(READ),
    schema: { hide: true, params: runParams },
    handler: async (req, reply) => {
      const scope = scopeOf(req);
      await getRun(ctx(req), scope, req.params, req.params.run_slug);
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'text/plain; charset=utf-8',
        'content-disposition': `attachment; filename="${req.params.run_slug}.log"`,
        'x-request-id': req.id,
      });
      let after = 0;
      for (;;) {
        const page = await listLogs(ctx(req), scope, req.params, req.params.run_slug, {
          limit: 100,
          sort_by: 'log_seq',
          order: 'asc',
          direction: 'next',
          ...(after > 0 ? { cursor: logCursorAfter(after) } : {}),
        });
        const text = page.items
          .map((l) => `${l.at} ${l.level.toUpperCase()} ${l.step_slug ?? '-'} ${l.message}\n`)
          .join('');
        if (text && !reply.raw.write(text)) await new Promise((r) => reply.raw.once('drain', r));
        if (!page.has_more || page.items.length === 0) break;
        after = page.items[page.items.length - 1].seq;
      }
      reply.raw.end();
    },
  });
}
