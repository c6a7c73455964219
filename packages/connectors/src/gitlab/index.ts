import { forgeOperations } from '../gitforge/forge';
import type { ConnectorDefinition } from '../types';
import { gitlabClient } from './client';
import { gitlabConfigSchema } from './config';

export * from './config';

// The kind is the shared hosted-forge implementation (gitforge/) on its own SDK client.
const operations = forgeOperations({
  type: 'gitlab',
  label: 'GitLab',
  objects: ['issues', 'merge_requests'],
  client: gitlabClient,
});

export const gitlabConnector = {
  type: 'gitlab',
  label: 'GitLab',
  configSchema: gitlabConfigSchema,
  credentialsSchema: null,
  credentialDestination: ['base_url'],
  credentialsRequired: false,
  defaultReadOnly: false,
  ...operations,
} satisfies ConnectorDefinition;
