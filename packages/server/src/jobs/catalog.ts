import { z } from 'zod';

// Every job the workers know: payload schema (slugs and ids only, never secrets) and retry policy.
export const jobCatalog = {
  'email.verification': {
    schema: z.object({ userId: z.string().uuid() }),
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
  },
  'email.account_exists': {
    schema: z.object({ userId: z.string().uuid() }),
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
  },
  'email.invitation': {
    schema: z.object({ invitationId: z.string().uuid() }),
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
  },
  'data_sources.schema_import': {
    schema: z.object({ dataSourceId: z.string().uuid() }),
    // Failures are recorded as the import's diagnostic, so a retry only covers a lost worker.
    retryLimit: 1,
    retryDelay: 10,
    retryBackoff: false,
    expireInSeconds: 300,
  },
  'pipelines.run': {
    schema: z.object({ runId: z.string().uuid() }),
    // A lost worker is recovered by the run lease sweep (attempt 2, then WORKER_LOST), not by a
    // queue retry; the expiry only has to outlast the longest run.
    retryLimit: 0,
    retryDelay: 0,
    retryBackoff: false,
    expireInSeconds: 6 * 3600,
  },
  'pipelines.sweep': {
    schema: z.object({}).passthrough(),
    retryLimit: 0,
    retryDelay: 0,
    retryBackoff: false,
    expireInSeconds: 120,
  },
  'proof.observe': {
    schema: z.object({ observationId: z.string().uuid() }),
    // Failures are recorded on the observation (state error); a retry only covers a lost worker.
    retryLimit: 1,
    retryDelay: 10,
    retryBackoff: false,
    expireInSeconds: 600,
  },
  'events.retention': {
    schema: z.object({}).passthrough(),
    retryLimit: 2,
    retryDelay: 60,
    retryBackoff: false,
    expireInSeconds: 600,
  },
  // Alerting (docs/alerting.md): a send decision per notification, one try per delivery job (our
  // own retry rows, so the queue never retries), and destination tests on their own queue.
  'alerts.dispatch': {
    schema: z.object({
      notificationId: z.string().uuid(),
      seq: z.number().int().min(1),
      reason: z.enum(['open', 'reopen', 'escalate', 'repeat']),
    }),
    retryLimit: 3,
    retryDelay: 10,
    retryBackoff: true,
    expireInSeconds: 120,
  },
  'alerts.deliver': {
    schema: z.object({ attemptId: z.string().uuid() }),
    // Only for a lost worker or a store error: the attempt row is still queued, so the same try
    // runs again. SMTP failures are recorded and retried as new attempt rows, never by the queue.
    retryLimit: 2,
    retryDelay: 30,
    retryBackoff: false,
    expireInSeconds: 180,
  },
  'alerts.destination_test': {
    schema: z.object({ destinationId: z.string().uuid(), testId: z.string().min(1).max(64) }),
    retryLimit: 0,
    retryDelay: 0,
    retryBackoff: false,
    expireInSeconds: 120,
  },
} as const;

export type JobName = keyof typeof jobCatalog;
export type JobData<N extends JobName> = z.infer<(typeof jobCatalog)[N]['schema']>;
export const jobNames = Object.keys(jobCatalog) as JobName[];
