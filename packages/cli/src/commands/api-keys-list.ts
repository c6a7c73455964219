import { unwrap } from '@sluice/client';
import { type Command, InvalidArgumentError } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { type ApiKey, printKeyTable } from './api-keys-format';

type ListOptions = ApiOptions & { org: string; limit: number; cursor?: string; all?: boolean };

function pageSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('an integer from 1 to 100');
  return n;
}

export function apiKeysListCommand(apiKeys: Command) {
  withApiOptions(
    apiKeys
      .command('list')
      .description('List the API keys of an organization, newest first')
      .addOption(orgOption())
      .option('--limit <n>', 'page size, 1 to 100', pageSize, 20)
      .option('--cursor <cursor>', 'continue from a previous page (its next_cursor)')
      .option('--all', 'follow next_cursor until every key is listed'),
  ).action(async (opts: ListOptions) => {
    const client = await apiClient(opts);
    const keys: ApiKey[] = [];
    let cursor = opts.cursor;
    for (;;) {
      const page = await unwrap(
        client.GET('/organizations/{organization}/api-keys', {
          params: { path: { organization: opts.org }, query: { limit: opts.limit, cursor } },
        }),
      );
      if (!opts.all) {
        if (opts.json) return printJson(page);
        printKeyTable(page.api_keys);
        if (page.has_more) process.stderr.write(`more keys: --cursor ${page.next_cursor} (or --all)\n`);
        return;
      }
      keys.push(...page.api_keys);
      if (!page.has_more || !page.next_cursor) break;
      cursor = page.next_cursor;
    }
    if (opts.json)
      return printJson({ api_keys: keys, has_more: false, next_cursor: null, prev_cursor: null });
    printKeyTable(keys);
  });
}
