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
} as const;

export type JobName = keyof typeof jobCatalog;
export type JobData<N extends JobName> = z.infer<(typeof jobCatalog)[N]['schema']>;
export const jobNames = Object.keys(jobCatalog) as JobName[];
