import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { printBillingProfile } from './billing-format';

type GetOptions = ApiOptions & { org?: string };

export function billingGetCommand(billing: Command) {
  withApiOptions(
    billing
      .command('get')
      .description("Show your billing profile, or an organization's with --org")
      .option('--org <slug>', "the organization's profile instead of your own"),
  ).action(async (opts: GetOptions) => {
    const client = await apiClient(opts);
    const profile = opts.org
      ? await unwrap(
          client.GET('/organizations/{organization}/billing-profile', {
            params: { path: { organization: opts.org } },
          }),
        )
      : await unwrap(client.GET('/users/me/billing-profile'));
    if (opts.json) return printJson(profile);
    printBillingProfile(profile);
  });
}
