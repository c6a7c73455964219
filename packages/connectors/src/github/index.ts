import { forgeOperations } from '../gitforge/forge';
import type { ConnectorDefinition } from '../types';
import { githubClient } from './client';
import { githubConfigSchema } from './config';

export * from './config';

// The kind is the shared hosted-forge implementation (gitforge/) on its own SDK client.
const operations = forgeOperations({
  type: 'github',
  label: 'GitHub',
  objects: ['issues', 'pull_requests'],
  client: githubClient,
});

export const githubConnector = {
  type: 'github',
  label: 'GitHub',
  configSchema: githubConfigSchema,
  credentialsSchema: null,
  credentialDestination: ['base_url'],
  credentialsRequired: false,
  defaultReadOnly: false,
  ...operations,
} satisfies ConnectorDefinition;
