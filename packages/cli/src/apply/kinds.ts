import { bindingKind } from './kind-binding';
import { dataSourceKind } from './kind-data-source';
import { deploymentKind } from './kind-deployment';
import { environmentKind } from './kind-environment';
import { pipelineKind } from './kind-pipeline';
import { projectKind } from './kind-project';
import type { ResourceKind } from './types';

// Every kind `sluice apply` understands. Adding one (a trigger, an alert policy) is one file
// exporting a ResourceKind and one line here; the engine and the command need no change.
// docs/cli.md "Adding a resource kind" describes the contract.
export const resourceKinds: ResourceKind[] = [
  dataSourceKind,
  environmentKind,
  projectKind,
  pipelineKind,
  bindingKind,
  deploymentKind,
];
