import type { Deps } from '../context';
import type { TypedApp } from '../http/typed-app';
import { attemptsRoutes, destinationsRoutes, policiesRoutes } from './alerts/index';

import { apiKeysRoutes } from './api-keys/index';
import { billingRoutes } from './billing/index';
import { capturesRoutes } from './cdc/index';
import { contractFindings, contractsRoutes } from './contracts/index';

import { connectorsRoutes, dataSourcesRoutes, oauthRoutes } from './data-sources/index';

import { driftRoutes } from './drift/index';
import { environmentsRoutes } from './environments/index';
import { eventsRoutes } from './events/index';
import { identityRoutes } from './identity/index';
import { invitationsRoutes } from './invitations/index';
import { membersRoutes } from './members/index';
import { notificationsRoutes } from './notifications/index';
import { organizationsRoutes } from './organizations/index';
import {
  bindingsRoutes,
  deploymentsRoutes,
  pipelinesRoutes,
  refsRoutes,
  validationsRoutes,
  versionsRoutes,
} from './pipelines/index';

import { projectsRoutes } from './projects/index';
import { proofRoutes } from './proof/index';
import { queriesRoutes } from './queries/index';
import { rolesRoutes } from './roles/index';
import { runsRoutes } from './runs/index';
import { secretsRoutes } from './secrets/index';
import { setupRoutes } from './system/index';
import { triggersRoutes, webhooksRoutes } from './triggers/index';

import { variablesRoutes } from './variables/index';

export type ModuleRoutes = (app: TypedApp, deps: Deps) => Promise<void> | void;

// One line per domain module; routes are registered in this order.
export const modules: ModuleRoutes[] = [
  apiKeysRoutes,
  identityRoutes,
  organizationsRoutes,
  membersRoutes,
  invitationsRoutes,
  rolesRoutes,
  eventsRoutes,
  dataSourcesRoutes,
  connectorsRoutes,
  projectsRoutes,
  environmentsRoutes,
  secretsRoutes,
  variablesRoutes,
  oauthRoutes,
  queriesRoutes,
  runsRoutes,
  pipelinesRoutes,
  versionsRoutes,
  refsRoutes,
  bindingsRoutes,
  // Validation runs the contracts module's check too; pipelines sits below contracts.
  (app, deps) => validationsRoutes(app, deps, [contractFindings]),
  deploymentsRoutes,
  notificationsRoutes,
  attemptsRoutes,
  destinationsRoutes,
  policiesRoutes,
  triggersRoutes,
  webhooksRoutes,
  billingRoutes,
  proofRoutes,
  setupRoutes,
  driftRoutes,
  contractsRoutes,
  capturesRoutes,
];
