import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Reads } from '../db/replica';
import { forwardedOf } from './forwarded';

export function installMetrics(app: FastifyInstance, reads?: Reads): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  if (reads) replicaMetrics(registry, reads);
  const requests = new Counter({
    name: 'sluice_http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'sluice_http_request_duration_seconds',
    help: 'HTTP request latency in seconds, by method and route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // The labelled series of each method, route and status, found once: prom-client hashes the
  // label values on every call otherwise. Routes are the table's patterns, so the set is small.
  type Series = { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof duration.labels> };
  const series = new Map<string, Series>();
  // Callback style: a synchronous hook costs no promise per request.
  // The app host's /api requests, answered by these routes (http/forwarded.ts), are not the API
  // host's traffic: they are not counted here.
  app.addHook('onResponse', (req, reply, done) => {
    if (forwardedOf(req.raw)) return done();
    const route = req.routeOptions.url ?? 'unmatched';
    const key = `${req.method} ${reply.statusCode} ${route}`;
    let s = series.get(key);
    if (!s) {
      s = {
        count: requests.labels(req.method, route, String(reply.statusCode)),
        time: duration.labels(req.method, route),
      };
      series.set(key, s);
    }
    s.count.inc();
    s.time.observe(reply.elapsedTime / 1000);
    done();
  });
  return registry;
}

/** The read replica's state when DATABASE_READ_URL is set (docs/operations.md "Read replicas"). */
function replicaMetrics(registry: Registry, reads: Reads) {
  new Gauge({
    name: 'sluice_read_replica_usable',
    help: '1 while lists are read from the read replica, 0 while the store answers them',
    registers: [registry],
    collect() {
      this.set(reads.state().usable ? 1 : 0);
    },
  });
  new Gauge({
    name: 'sluice_read_replica_staleness_seconds',
    help: 'How far behind the store the read replica is at most, as of its last check',
    registers: [registry],
    collect() {
      const ms = reads.state().staleMs;
      if (ms !== null) this.set(ms / 1000);
    },
  });
  new Counter({
    name: 'sluice_list_reads_total',
    help: 'List reads by where they were answered: replica, primary (the replica not usable), retried (failed on the replica, answered by the store)',
    labelNames: ['served'],
    registers: [registry],
    collect() {
      const s = reads.state().served;
      this.reset();
      this.inc({ served: 'replica' }, s.replica);
      this.inc({ served: 'primary' }, s.primary);
      this.inc({ served: 'retried' }, s.retried);
    },
  });
}
