import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { CliError, ExitCode } from '../exit';
import { orgOption } from '../flags';
import { printJson, printLines } from '../io';

type ObserveOptions = ApiOptions & { org: string; commit?: string; ref?: string; wait?: boolean };

export function proofObserveCommand(proof: Command) {
  withApiOptions(
    proof
      .command('observe')
      .description('Check every proof target of a git data source at one commit')
      .argument('<data-source>', 'data source slug (git, github or gitlab)')
      .addOption(orgOption())
      .option('--commit <sha>', 'the commit to observe')
      .option('--ref <branch>', 'a branch, at its current commit (default: the default branch)')
      .option('--wait', 'wait until the observation has finished; exit 1 when it failed'),
  ).action(async (ds: string, opts: ObserveOptions) => {
    const client = await apiClient(opts);
    const path = { organization: opts.org, data_source: ds };
    let obs = await unwrap(
      client.POST('/organizations/{organization}/data-sources/{data_source}/proof-observations', {
        params: { path },
        body: { ...(opts.commit ? { commit_sha: opts.commit } : {}), ...(opts.ref ? { ref: opts.ref } : {}) },
      }),
    );
    while (opts.wait && obs.state === 'running') {
      await new Promise((r) => setTimeout(r, 500));
      obs = await unwrap(
        client.GET(
          '/organizations/{organization}/data-sources/{data_source}/proof-observations/{observation_slug}',
          {
            params: { path: { ...path, observation_slug: obs.slug } },
          },
        ),
      );
    }
    if (opts.json) printJson(obs);
    else
      printLines([
        `${obs.slug}: ${obs.state}${obs.commit_sha ? ` at ${obs.commit_sha}` : ''}${obs.candidate_slug ? ` (candidate ${obs.candidate_slug})` : ''}`,
        ...obs.targets.flatMap((t) => [
          `  ${t.kind} ${t.ref}: ${t.result}`,
          ...t.findings.map((f) => `    ${f.severity} ${f.code}: ${f.message}`),
        ]),
        ...(obs.error ? [`  error ${obs.error.code}: ${obs.error.message}`] : []),
      ]);
    // A failed check exits 1 like every other (README "Exit codes"); 2 is bootstrap's refusal.
    if (opts.wait && (obs.state === 'failed' || obs.state === 'error'))
      throw new CliError(ExitCode.failed, `observation ${obs.slug} ${obs.state}`);
  });
}
