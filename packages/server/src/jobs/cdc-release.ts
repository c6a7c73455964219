import { z } from 'zod';
import type { Deps } from '../context';
import { releaseCapture } from '../modules/cdc/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

// Drops a capture a deployment no longer needs (docs/cdc.md "Slot safety").

const payload = z.object({
  organizationId: z.string().uuid(),
  pipelineId: z.string().uuid(),
  environmentId: z.string().uuid(),
  dataSourceId: z.string().uuid(),
  capture: z.string().regex(/^sluice_[a-z0-9_]{1,56}$/),
  projectSlug: z.string(),
  pipelineSlug: z.string(),
  environmentSlug: z.string(),
  stepSlug: z.string(),
});

declare module './queue' {
  interface JobPayloads {
    'cdc.release': typeof payload;
  }
}

const RETRIES = 4;

const release =
  (deps: Deps): JobHandler<'cdc.release'> =>
  async (data, job) =>
    releaseCapture(deps, data, job.retryCount >= RETRIES);

export const cdcReleaseJob = defineJob({
  name: 'cdc.release',
  payload,
  // An unreachable source may come back: a few tries over about half an hour, then the
  // capture is left as an orphan with an event saying why (the handler records it itself).
  policy: { retry: { limit: RETRIES, delaySeconds: 60, backoff: true }, expireInSeconds: 120 },
  handler: release,
});
