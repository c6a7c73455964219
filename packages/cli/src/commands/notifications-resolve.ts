import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { printNotification } from './alerts-format';

export function notificationsResolveCommand(group: Command) {
  withApiOptions(
    group
      .command('resolve')
      .description('Resolve a notification; a later occurrence reopens it')
      .argument('<notification_slug>', 'slug of the notification')
      .addOption(orgOption()),
  ).action(async (slug: string, opts: ApiOptions & { org: string }) => {
    const client = await apiClient(opts);
    const n = await unwrap(
      client.POST('/organizations/{organization}/notifications/{notification_slug}:resolve', {
        params: { path: { organization: opts.org, notification_slug: slug } },
      }),
    );
    if (opts.json) return printJson(n);
    printNotification(n);
  });
}
