import { z } from 'zod';
import type { Deps } from '../context';
import { checkCaptures } from '../modules/cdc/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

// The slot safety check (docs/cdc.md "Slot safety"): every five minutes, once for the whole
// deployment, each capture of a deployed cdc step against SLUICE_CDC_LAG_ALERT_BYTES and
// SLUICE_CDC_INACTIVE_ALERT_MINUTES.

const payload = z.object({}).passthrough();

declare module './queue' {
  interface JobPayloads {
    'cdc.lag_check': typeof payload;
  }
}

const check =
  (deps: Deps): JobHandler<'cdc.lag_check'> =>
  async () => {
    await checkCaptures(deps);
  };

export const cdcLagCheckJob = defineJob({
  name: 'cdc.lag_check',
  payload,
  // The next tick checks again; a retry would only repeat the same reads.
  policy: { retry: { limit: 0, delaySeconds: 60, backoff: false }, expireInSeconds: 240 },
  schedule: '*/5 * * * *',
  handler: check,
});
