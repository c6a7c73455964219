import { unwrap } from '@sluice/client';
import { type Command, InvalidArgumentError } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { printAttemptTable } from './alerts-format';

type AttemptsOptions = ApiOptions & { org: string; notification: string[]; perNotification: number };

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',')];
function perNotification(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw new InvalidArgumentError('an integer from 1 to 10');
  return n;
}

export function alertsAttemptsCommand(group: Command) {
  withApiOptions(
    group
      .command('attempts')
      .description('Recent delivery attempts of up to 50 notifications, newest first per notification')
      .addOption(orgOption())
      .requiredOption(
        '--notification <slug>',
        'notification slug; repeat (or comma-separate) for more',
        collect,
      )
      .option('--per-notification <n>', 'attempts per notification, 1 to 10', perNotification, 5),
  ).action(async (opts: AttemptsOptions) => {
    const client = await apiClient(opts);
    const page = await unwrap(
      client.GET('/organizations/{organization}/alert-delivery-attempts', {
        params: {
          path: { organization: opts.org },
          query: {
            notification_slugs: opts.notification.join(',') as any,
            limit_per_notification: opts.perNotification,
          },
        },
      }),
    );
    if (opts.json) return printJson(page);
    printAttemptTable(page.alert_delivery_attempts);
  });
}
