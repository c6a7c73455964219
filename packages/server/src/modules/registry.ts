import type { Deps } from '../context';
import type { TypedApp } from '../http/typed-app';
import { attemptsRoutes } from './alerts/attempts.routes';
import { destinationsRoutes } from './alerts/destinations.routes';
import { policiesRoutes } from './alerts/policies.routes';
import { apiKeysRoutes } from './api-keys/api-keys.routes';
import { billingRoutes } from './billing/billing.routes';
import { contractFindings } from './contracts/contract-validation';
import { contractsRoutes } from './contracts/contracts.routes';
import { connectorsRoutes } from './data-sources/connectors.routes';
import { dataSourcesRoutes } from './data-sources/data-sources.routes';
import { oauthRoutes } from './data-sources/oauth.routes';
import { driftRoutes } from './drift/drift.routes';
import { environmentsRoutes } from './environments/environments.routes';
import { eventsRoutes } from './events/events.routes';
import { identityRoutes } from './identity/identity.routes';
import { invitationsRoutes } from './invitations/invitations.routes';
import { membersRoutes } from './members/members.routes';
import { notificationsRoutes } from './notifications/notifications.routes';
import { organizationsRoutes } from './organizations/organizations.routes';
import { bindingsRoutes } from './pipelines/bindings.routes';
import { deploymentsRoutes } from './pipelines/deployments.routes';
import { pipelinesRoutes } from './pipelines/pipelines.routes';
import { refsRoutes } from './pipelines/refs.routes';
import { validationsRoutes } from './pipelines/validations.routes';
import { versionsRoutes } from './pipelines/versions.routes';
import { projectsRoutes } from './projects/projects.routes';
import { proofRoutes } from './proof/proof.routes';
import { queriesRoutes } from './queries/queries.routes';
import { rolesRoutes } from './roles/roles.routes';
import { runsRoutes } from './runs/runs.routes';
import { secretsRoutes } from './secrets/secrets.routes';
import { setupRoutes } from './system/setup.routes';
import { triggersRoutes } from './triggers/triggers.routes';
import { webhooksRoutes } from './triggers/webhooks.routes';
import { variablesRoutes } from './variables/variables.routes';

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
];
