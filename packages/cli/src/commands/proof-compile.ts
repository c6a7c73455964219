import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson, printLines } from '../io';

type CompileOptions = ApiOptions & { org: string; candidate: string };

export function proofCompileCommand(proof: Command) {
  withApiOptions(
    proof
      .command('compile')
      .description('Compile a signed receipt from one observation, or two (base then head)')
      .argument('<data-source>', 'data source slug')
      .argument('<observations...>', 'observation slugs: the head, or the base then the head')
      .addOption(orgOption())
      .requiredOption('--candidate <slug>', 'the candidate (repository and commit) the receipt is for'),
  ).action(async (ds: string, observations: string[], opts: CompileOptions) => {
    const client = await apiClient(opts);
    const receipt = await unwrap(
      client.POST('/organizations/{organization}/data-sources/{data_source}/proof-receipts:compile', {
        params: { path: { organization: opts.org, data_source: ds } },
        body: { candidate_slug: opts.candidate, observation_slugs: observations },
      }),
    );
    if (opts.json) return printJson(receipt);
    printLines([
      `${receipt.slug}: ${receipt.verdict} (#${receipt.sequence}, digest ${receipt.digest})`,
      ...(receipt.check
        ? [
            `check ${receipt.check.name}: ${receipt.check.published ? receipt.check.conclusion : `not published: ${receipt.check.error}`}`,
          ]
        : []),
      'save it with --json and check it offline with `sluice proof verify FILE --keys KEYS`',
    ]);
  });
}
