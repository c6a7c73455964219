import fs from 'node:fs';
import { Command } from 'commander';
import { alertsAttemptsCommand } from './commands/alerts-attempts';
import { alertsDestinationsCreateCommand } from './commands/alerts-destinations-create';
import { alertsDestinationsDeleteCommand } from './commands/alerts-destinations-delete';
import { alertsDestinationsListCommand } from './commands/alerts-destinations-list';
import { alertsDestinationsTestCommand } from './commands/alerts-destinations-test';
import { alertsDestinationsUpdateCommand } from './commands/alerts-destinations-update';
import { alertsPoliciesCreateCommand } from './commands/alerts-policies-create';
import { alertsPoliciesDeleteCommand } from './commands/alerts-policies-delete';
import { alertsPoliciesListCommand } from './commands/alerts-policies-list';
import { alertsPoliciesUpdateCommand } from './commands/alerts-policies-update';
import { apiKeysCreateCommand } from './commands/api-keys-create';
import { apiKeysListCommand } from './commands/api-keys-list';
import { apiKeysManageCommands } from './commands/api-keys-manage';
import { apiKeysRevokeCommand } from './commands/api-keys-revoke';
import { applyCommand } from './commands/apply';
import { billingGetCommand } from './commands/billing-get';
import { billingSetCommand } from './commands/billing-set';
import { bindingsCommand } from './commands/bindings';
import { bootstrapCommand } from './commands/bootstrap';
import { cdcCommand } from './commands/cdc';
import { checkpointsCommand } from './commands/checkpoints';
import { completionCommand } from './commands/completion';
import { contractsCreateCommand } from './commands/contracts-create';
import { contractsGetCommand } from './commands/contracts-get';
import { contractsListCommand } from './commands/contracts-list';
import { contractsReviseCommand } from './commands/contracts-revise';
import { contractsRevisionCommand } from './commands/contracts-revision';
import { dataSourcesCommand } from './commands/data-sources';
import { driftGetCommand } from './commands/drift-get';
import { driftListCommand } from './commands/drift-list';
import { driftPreviewCommand } from './commands/drift-preview';
import { environmentsCommand } from './commands/environments';
import { eventsCommand } from './commands/events';
import { invitationsCommand } from './commands/invitations';
import { keysRotateCommand } from './commands/keys-rotate';
import { keysRotateProofKeyCommand } from './commands/keys-rotate-proof-key';
import { loginCommand } from './commands/login';
import { membersCommand } from './commands/members';
import { migrateCommand } from './commands/migrate';
import { notificationsAckCommand } from './commands/notifications-ack';
import { notificationsGetCommand } from './commands/notifications-get';
import { notificationsListCommand } from './commands/notifications-list';
import { notificationsResolveCommand } from './commands/notifications-resolve';
import { organizationsCommand } from './commands/organizations';
import { pipelinesDeployCommand, pipelinesUndeployCommand } from './commands/pipelines-deploy';
import { pipelinesExecuteCommand } from './commands/pipelines-execute';
import { pipelinesPushCommand } from './commands/pipelines-push';
import { pipelinesReadCommands } from './commands/pipelines-read';
import { pipelinesValidateCommand } from './commands/pipelines-validate';
import { projectsCommand } from './commands/projects';
import { proofCompileCommand } from './commands/proof-compile';
import { proofKeysCommand } from './commands/proof-keys';
import { proofObserveCommand } from './commands/proof-observe';
import { proofVerifyCommand } from './commands/proof-verify';
import { queriesCommand } from './commands/queries';
import { rolesCommand } from './commands/roles';
import { runsCancelCommand } from './commands/runs-cancel';
import { runsGetCommands } from './commands/runs-get';
import { runsListCommand } from './commands/runs-list';
import { runsWatchCommand } from './commands/runs-watch';
import { secretsCommand } from './commands/secrets';
import { serveCommand } from './commands/serve';
import { setupCommand } from './commands/setup';
import { transformHostCommand } from './commands/transform-host';
import { triggersCreateCommand } from './commands/triggers-create';
import { triggersDeleteCommand } from './commands/triggers-delete';
import { triggersGetCommand } from './commands/triggers-get';
import { triggersListCommand } from './commands/triggers-list';
import { triggersOccurrencesCommand } from './commands/triggers-occurrences';
import { triggersPauseCommand } from './commands/triggers-pause';
import { triggersPreviewCommand } from './commands/triggers-preview';
import { triggersResumeCommand } from './commands/triggers-resume';
import { triggersRotateSecretCommand } from './commands/triggers-rotate-secret';
import { triggersUpdateCommand } from './commands/triggers-update';
import { usersSetPasswordCommand } from './commands/users-set-password';
import { variablesCommand } from './commands/variables';
import { webhooksSignCommand } from './commands/webhooks-sign';
import { workerCommand } from './commands/worker';

const { version } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

// The whole command tree, built on import without running anything: run.ts (the entry point)
// parses the command line with it, and the --help walk (grammar.test.ts) checks its flags.
export const program = new Command()
  .name('sluice')
  .description('Sluice, a self-hostable data-pipeline platform: server processes and API automation')
  .version(version)
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nAPI commands read the token from --token-stdin, SLUICE_TOKEN or the login profile (sluice login).\n' +
      'Exit codes: 0 ok, 1 API or usage error or a failed check (connection test, validation, run with --wait),\n' +
      '2 refused, 3 store locked or unavailable, 4 API host unreachable.',
  );

// One file per command: commands/<noun>-<verb>.ts.
serveCommand(program);
transformHostCommand(program);
workerCommand(program);
migrateCommand(program);
bootstrapCommand(program);
const apiKeys = program.command('api-keys').description('Manage organization API keys over the API');
apiKeysCreateCommand(apiKeys);
apiKeysListCommand(apiKeys);
apiKeysRevokeCommand(apiKeys);
apiKeysManageCommands(apiKeys);
const pipelines = program
  .command('pipelines')
  .description('Push, validate, deploy and execute pipelines over the API (docs/pipeline-spec.md)');
pipelinesPushCommand(pipelines);
pipelinesValidateCommand(pipelines);
pipelinesDeployCommand(pipelines);
pipelinesUndeployCommand(pipelines);
pipelinesExecuteCommand(pipelines);
pipelinesReadCommands(pipelines);
const runs = program.command('runs').description('List, follow and cancel pipeline runs over the API');
runsListCommand(runs);
runsWatchCommand(runs);
runsCancelCommand(runs);
const notifications = program
  .command('notifications')
  .description('List, show, acknowledge and resolve notifications over the API (docs/alerting.md)');
notificationsListCommand(notifications);
notificationsGetCommand(notifications);
notificationsAckCommand(notifications);
notificationsResolveCommand(notifications);
const alerts = program.command('alerts').description('Alert destinations, policies and delivery attempts');
const destinations = alerts.command('destinations').description('Manage email alert destinations');
alertsDestinationsListCommand(destinations);
alertsDestinationsCreateCommand(destinations);
alertsDestinationsUpdateCommand(destinations);
alertsDestinationsDeleteCommand(destinations);
alertsDestinationsTestCommand(destinations);
const policies = alerts.command('policies').description('Manage alert policies');
alertsPoliciesListCommand(policies);
alertsPoliciesCreateCommand(policies);
alertsPoliciesUpdateCommand(policies);
alertsPoliciesDeleteCommand(policies);
alertsAttemptsCommand(alerts);
const triggers = program
  .command('triggers')
  .description('Schedules and webhooks that run a pipeline (docs/triggers.md)');
triggersListCommand(triggers);
triggersGetCommand(triggers);
triggersCreateCommand(triggers);
triggersUpdateCommand(triggers);
triggersPauseCommand(triggers);
triggersResumeCommand(triggers);
triggersDeleteCommand(triggers);
triggersRotateSecretCommand(triggers);
triggersPreviewCommand(triggers);
triggersOccurrencesCommand(triggers);
webhooksSignCommand(program.command('webhooks').description('Helpers for webhook senders'));
const billing = program.command('billing').description('Show and set billing profiles over the API');
billingGetCommand(billing);
billingSetCommand(billing);
const proof = program.command('proof').description('Proof receipts for git-backed data (docs/proof.md)');
proofObserveCommand(proof);
proofCompileCommand(proof);
proofKeysCommand(proof);
proofVerifyCommand(proof);
runsGetCommands(runs);
setupCommand(program);
loginCommand(program);
applyCommand(program);
organizationsCommand(program);
projectsCommand(program);
environmentsCommand(program);
secretsCommand(program);
variablesCommand(program);
dataSourcesCommand(program);
bindingsCommand(program);
checkpointsCommand(program);
cdcCommand(program);
queriesCommand(program);
eventsCommand(program);
membersCommand(program);
invitationsCommand(program);
rolesCommand(program);
completionCommand(program);
const drift = program.command('drift').description('Drift impact reports: list, show, preview');
driftListCommand(drift);
driftGetCommand(drift);
driftPreviewCommand(drift);
const contracts = program
  .command('contracts')
  .description('Data contracts on pipeline sinks and their revisions');
contractsListCommand(contracts);
contractsCreateCommand(contracts);
contractsGetCommand(contracts);
contractsReviseCommand(contracts);
contractsRevisionCommand(contracts);
usersSetPasswordCommand(program.command('users').description('Manage user accounts in the store'));
const keys = program
  .command('keys')
  .description('Manage the encryption keys of stored secrets and the proof signing key');
keysRotateCommand(keys);
keysRotateProofKeyCommand(keys);
