import { alertDeliverJob } from './alert-deliver';
import { alertDestinationTestJob } from './alert-destination-test';
import { alertDispatchJob } from './alert-dispatch';
import { cdcLagCheckJob } from './cdc-lag-check';
import { cdcReleaseJob } from './cdc-release';
import type { AnyJobDefinition } from './define';
import { emailAccountExistsJob } from './email-account-exists';
import { emailInvitationJob } from './email-invitation';
import { emailVerificationJob } from './email-verification';
import { eventsRetentionJob } from './events-retention';
import { proofObserveJob } from './proof-observe';
import type { JobName } from './queue';
import { runPipelineJob } from './run-pipeline';
import { runSweepJob } from './run-sweep';
import { schemaImportJob } from './schema-import';

/** Every job the workers know, one definition per file (docs/architecture.md#background-work). */
export const jobDefinitions = [
  emailVerificationJob,
  emailAccountExistsJob,
  emailInvitationJob,
  schemaImportJob,
  runPipelineJob,
  runSweepJob,
  proofObserveJob,
  eventsRetentionJob,
  // Alerting (docs/alerting.md): a send decision per notification, one try per delivery job (our
  // own retry rows, so the queue never retries), and destination tests on their own queue.
  alertDispatchJob,
  alertDeliverJob,
  alertDestinationTestJob,
  // Change data capture slot safety (docs/cdc.md "Slot safety").
  cdcReleaseJob,
  cdcLagCheckJob,
] as const satisfies readonly AnyJobDefinition[];

// A job file that declares a payload but is missing above fails to compile here.
type Unlisted = Exclude<JobName, (typeof jobDefinitions)[number]['name']>;
const everyJobListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyJobListed;
