import fs from 'node:fs';
import { Command } from 'commander';
import { apiKeysCreateCommand } from './commands/api-keys-create';
import { apiKeysListCommand } from './commands/api-keys-list';
import { apiKeysRevokeCommand } from './commands/api-keys-revoke';
import { bootstrapCommand } from './commands/bootstrap';
import { keysRotateCommand } from './commands/keys-rotate';
import { migrateCommand } from './commands/migrate';
import { pipelinesDeployCommand } from './commands/pipelines-deploy';
import { pipelinesExecuteCommand } from './commands/pipelines-execute';
import { pipelinesPushCommand } from './commands/pipelines-push';
import { pipelinesValidateCommand } from './commands/pipelines-validate';
import { runsCancelCommand } from './commands/runs-cancel';
import { runsListCommand } from './commands/runs-list';
import { runsWatchCommand } from './commands/runs-watch';
import { serveCommand } from './commands/serve';
import { usersSetPasswordCommand } from './commands/users-set-password';
import { workerCommand } from './commands/worker';
import { describeFailure, ExitCode } from './exit';

const { version } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

const program = new Command()
  .name('sluice')
  .description('Sluice, a self-hostable data-pipeline platform: server processes and API automation')
  .version(version)
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nAPI commands read the token from SLUICE_TOKEN (or --token-stdin).\n' +
      'Exit codes: 0 ok, 1 API or usage error, 2 refused, 3 store locked or unavailable, 4 API host unreachable.',
  );

// One file per command: commands/<noun>-<verb>.ts.
serveCommand(program);
workerCommand(program);
migrateCommand(program);
bootstrapCommand(program);
const apiKeys = program.command('api-keys').description('Manage organization API keys over the API');
apiKeysCreateCommand(apiKeys);
apiKeysListCommand(apiKeys);
apiKeysRevokeCommand(apiKeys);
const pipelines = program
  .command('pipelines')
  .description('Push, validate, deploy and execute pipelines over the API (docs/pipeline-spec.md)');
pipelinesPushCommand(pipelines);
pipelinesValidateCommand(pipelines);
pipelinesDeployCommand(pipelines);
pipelinesExecuteCommand(pipelines);
const runs = program.command('runs').description('List, follow and cancel pipeline runs over the API');
runsListCommand(runs);
runsWatchCommand(runs);
runsCancelCommand(runs);
usersSetPasswordCommand(program.command('users').description('Manage user accounts in the store'));
keysRotateCommand(program.command('keys').description('Manage the encryption keys of stored secrets'));

try {
  await program.parseAsync(process.argv);
  process.exit(ExitCode.ok);
} catch (err) {
  const { exitCode, message } = describeFailure(err);
  process.stderr.write(`sluice: ${message}\n`);
  process.exit(exitCode);
}
