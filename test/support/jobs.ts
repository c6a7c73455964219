import { randomUUID } from 'node:crypto';
import { createSessionPool } from '@sluice/connectors';
import type { Deps } from '../../packages/server/src/context';
import type { JobDefinition } from '../../packages/server/src/jobs/define';
import type { JobData, JobName } from '../../packages/server/src/jobs/queue';

/** Runs one job's handler in this process, as a worker would, without the queue. */
export async function runJobNow<N extends JobName>(deps: Deps, job: JobDefinition<N>, data: JobData<N>) {
  const sessions = createSessionPool({ maxIdle: 0 });
  try {
    await job.handler(deps, { sessions })(data, { id: randomUUID(), retryCount: 0 });
  } finally {
    await sessions.close();
  }
}
