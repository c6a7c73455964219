import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { hiddenAlias, orgOption } from '../flags';
import { printJson } from '../io';
import { printPolicyTable } from './alerts-format';

type CreateOptions = ApiOptions & {
  org: string;
  name: string;
  slug?: string;
  scope: 'organization' | 'project' | 'project_environment';
  project?: string;
  env?: string;
  type?: string;
  severity?: string;
  state?: string;
  sourceKind?: string;
  sourceAction?: string;
  sourceRef?: string;
  destination: string[];
  disabled?: boolean;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function alertsPoliciesCreateCommand(group: Command) {
  withApiOptions(
    group
      .command('create')
      .description('Create an alert policy (every non-null filter must match)')
      .addOption(orgOption())
      .requiredOption('--name <name>', 'display name')
      .option('--slug <slug>', 'slug (default: from the name)')
      .option('--scope <scope>', 'organization, project or project_environment', 'organization')
      .option('--project <slug>', 'project (project scopes)')
      .option('--env <slug>', 'environment (project_environment scope)')
      .addOption(hiddenAlias('--environment <slug>', 'env'))
      .option('--type <type>', 'notification type to match')
      .option('--severity <severity>', 'severity to match')
      .option('--state <state>', 'lifecycle state to match')
      .option('--source-kind <kind>', 'source entity type to match')
      .option('--source-action <action>', 'source action to match')
      .option('--source-ref <slug>', 'source ref (pipeline, data source …) to match')
      .requiredOption('--destination <slug>', 'destination; repeat for more', collect)
      .option('--disabled', 'create it disabled'),
  ).action(async (opts: CreateOptions) => {
    const client = await apiClient(opts);
    const p = await unwrap(
      client.POST('/organizations/{organization}/alert-policies', {
        params: { path: { organization: opts.org } },
        body: {
          name: opts.name,
          ...(opts.slug ? { slug: opts.slug } : {}),
          scope: opts.scope,
          project_slug: opts.project ?? null,
          environment_slug: opts.env ?? null,
          notification_type: (opts.type ?? null) as any,
          severity: (opts.severity ?? null) as any,
          lifecycle_state: (opts.state ?? null) as any,
          source_kind: (opts.sourceKind ?? null) as any,
          source_action: (opts.sourceAction ?? null) as any,
          source_ref: opts.sourceRef ?? null,
          destination_slugs: opts.destination,
          enabled: !opts.disabled,
        },
      }),
    );
    if (opts.json) return printJson(p);
    printPolicyTable([p]);
  });
}
