import type { QueryClient } from '@tanstack/react-query';
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Outlet,
  redirect,
} from '@tanstack/react-router';
import { OrgLayout } from './components/shell';
import { organizationsQuery } from './lib/queries/organizations';
import { strings } from './lib/search';
import { sessionQuery } from './lib/session';
import { RunsList } from './screens/runs-list';
import { SignIn } from './screens/sign-in';

type Ctx = { queryClient: QueryClient };

const eventFilters = [
  'entity_type',
  'entity_slug',
  'action',
  'actor_type',
  'actor_slug',
  'occurred_from',
  'occurred_before',
  'cursor',
  'direction',
] as const;

const rootRoute = createRootRouteWithContext<Ctx>()({ component: Outlet });

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-in',
  validateSearch: strings(['next'] as const),
  component: SignIn,
});

// The verification mail links here; confirming needs no session, so the page is public.
const verifyEmailRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/verify-email',
  validateSearch: strings(['token'] as const),
  component: lazyRouteComponent(() => import('./screens/verify-email'), 'VerifyEmail'),
});

// Everything else needs a session; without one the browser goes to sign-in and comes back.
const authedRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'authed',
  beforeLoad: async ({ context, location }) => {
    const session = await context.queryClient.ensureQueryData(sessionQuery);
    if (!session) throw redirect({ to: '/sign-in', search: { next: location.href } });
    return { session };
  },
  component: Outlet,
});

const indexRoute = createRoute({
  getParentRoute: () => authedRoute,
  path: '/',
  beforeLoad: async ({ context }) => {
    const orgs = await context.queryClient.fetchQuery(organizationsQuery());
    const first = orgs.organizations[0];
    if (first) throw redirect({ to: '/o/$org/runs', params: { org: first.slug } });
  },
  component: () => <p className="p-8">You are not a member of any organization yet.</p>,
});

// The invitation mail links here; a signed-out visitor signs in first and comes back.
const invitationRoute = createRoute({
  getParentRoute: () => authedRoute,
  path: '/invitations/$slug',
  component: lazyRouteComponent(() => import('./screens/invitation'), 'InvitationScreen'),
});

const orgRoute = createRoute({ getParentRoute: () => authedRoute, path: '/o/$org', component: OrgLayout });

const runsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/runs',
  validateSearch: strings(['project', 'env', 'state', 'pipeline'] as const),
  component: RunsList,
});

const runRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/runs/$project/$env/$run',
  validateSearch: strings(['level', 'q', 'step'] as const),
  component: lazyRouteComponent(() => import('./screens/run-detail'), 'RunDetail'),
});

const pipelinesRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/pipelines',
  validateSearch: strings(['project'] as const),
  component: lazyRouteComponent(() => import('./screens/pipelines-list'), 'PipelinesList'),
});

const newPipelineRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/pipelines/new',
  validateSearch: strings(['project'] as const),
  component: lazyRouteComponent(() => import('./screens/pipeline-new'), 'PipelineNew'),
});

const pipelineRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/pipelines/$project/$pipeline',
  validateSearch: strings(['tab', 'version', 'a', 'b', 'env'] as const),
  component: lazyRouteComponent(() => import('./screens/pipeline-detail'), 'PipelineDetail'),
});

const dataSourcesRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/data-sources',
  validateSearch: strings(['cursor', 'direction'] as const),
  component: lazyRouteComponent(() => import('./screens/data-sources-list'), 'DataSourcesList'),
});

const newDataSourceRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/data-sources/new',
  validateSearch: strings(['type'] as const),
  component: lazyRouteComponent(() => import('./screens/data-source-edit'), 'DataSourceNew'),
});

const dataSourceRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/data-sources/$ds',
  validateSearch: strings(['tab', 'q'] as const),
  component: lazyRouteComponent(() => import('./screens/data-source-edit'), 'DataSourceDetail'),
});

const queriesRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/queries',
  validateSearch: strings(['query', 'execution'] as const),
  component: lazyRouteComponent(() => import('./screens/queries'), 'Queries'),
});

const eventsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/events',
  validateSearch: strings(eventFilters),
  component: lazyRouteComponent(() => import('./screens/events'), 'EventsScreen'),
});

const auditRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/audit',
  validateSearch: strings(eventFilters),
  component: lazyRouteComponent(() => import('./screens/events'), 'AuditScreen'),
});

const notificationsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/notifications',
  validateSearch: strings([
    'lifecycle_state',
    'severity',
    'notification_type',
    'project_slug',
    'environment_slug',
    'cursor',
    'direction',
  ] as const),
  component: lazyRouteComponent(() => import('./screens/notifications'), 'NotificationsList'),
});

// The alert emails link here (alerts/alert-message.ts).
const notificationRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/notifications/$slug',
  component: lazyRouteComponent(() => import('./screens/notifications'), 'NotificationDetail'),
});

const settingsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/settings/$section',
  validateSearch: strings(['env', 'status', 'role', 'cursor', 'direction'] as const),
  component: lazyRouteComponent(() => import('./screens/settings'), 'Settings'),
});

// Alerting (docs/alerting.md): policies, destinations and the delivery attempts across notifications.
const alertPoliciesRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/alerts/policies',
  validateSearch: strings(['cursor', 'direction'] as const),
  component: lazyRouteComponent(() => import('./screens/alert-policies'), 'PoliciesList'),
});

const alertPolicyNewRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/alerts/policies/new',
  component: lazyRouteComponent(() => import('./screens/alert-policies'), 'PolicyNew'),
});

const alertPolicyRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/alerts/policies/$slug',
  component: lazyRouteComponent(() => import('./screens/alert-policies'), 'PolicyDetail'),
});

const alertDestinationsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/alerts/destinations',
  validateSearch: strings(['cursor', 'direction'] as const),
  component: lazyRouteComponent(() => import('./screens/alert-destinations'), 'DestinationsList'),
});

const alertDestinationNewRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/alerts/destinations/new',
  component: lazyRouteComponent(() => import('./screens/alert-destinations'), 'DestinationNew'),
});

const alertDestinationRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/alerts/destinations/$slug',
  component: lazyRouteComponent(() => import('./screens/alert-destinations'), 'DestinationDetail'),
});

const alertAttemptsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/alerts/attempts',
  validateSearch: strings([
    'lifecycle_state',
    'severity',
    'notification_type',
    'project_slug',
    'status',
    'per',
    'notification_slugs',
    'cursor',
    'direction',
  ] as const),
  component: lazyRouteComponent(() => import('./screens/delivery-attempts'), 'DeliveryAttempts'),
});

// Triggers, drift reports, contracts and proof receipts (docs/triggers.md, drift-and-contracts.md, proof.md).
const triggerRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/pipelines/$project/$pipeline/triggers/$trigger',
  validateSearch: strings(['env', 'outcome', 'cursor', 'direction'] as const),
  component: lazyRouteComponent(() => import('./screens/trigger-detail'), 'TriggerDetail'),
});

const triggersRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/triggers',
  validateSearch: strings(['project', 'env'] as const),
  component: lazyRouteComponent(() => import('./screens/triggers-list'), 'TriggersList'),
});

const driftRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/drift',
  validateSearch: strings(['project', 'order', 'cursor', 'direction'] as const),
  component: lazyRouteComponent(() => import('./screens/drift'), 'DriftList'),
});

const driftReportRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/drift/$project/$report',
  component: lazyRouteComponent(() => import('./screens/drift'), 'DriftReportPage'),
});

const contractsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/contracts',
  validateSearch: strings(['project', 'cursor', 'direction'] as const),
  component: lazyRouteComponent(() => import('./screens/contracts'), 'ContractsList'),
});

const contractRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/contracts/$project/$contract',
  validateSearch: strings(['revision'] as const),
  component: lazyRouteComponent(() => import('./screens/contract-detail'), 'ContractDetail'),
});

// The commit check a compiled receipt publishes links here (proof/proof-receipts.service.ts).
const proofReceiptRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: '/data-sources/$ds/proof-receipts/$receipt',
  component: lazyRouteComponent(() => import('./screens/proof-receipt'), 'ProofReceiptPage'),
});

const routeTree = rootRoute.addChildren([
  signInRoute,
  verifyEmailRoute,
  authedRoute.addChildren([
    indexRoute,
    invitationRoute,
    orgRoute.addChildren([
      runsRoute,
      runRoute,
      pipelinesRoute,
      newPipelineRoute,
      pipelineRoute,
      dataSourcesRoute,
      newDataSourceRoute,
      dataSourceRoute,
      queriesRoute,
      eventsRoute,
      auditRoute,
      notificationsRoute,
      notificationRoute,
      settingsRoute,
      alertPoliciesRoute,
      alertPolicyNewRoute,
      alertPolicyRoute,
      alertDestinationsRoute,
      alertDestinationNewRoute,
      alertDestinationRoute,
      alertAttemptsRoute,
      triggerRoute,
      triggersRoute,
      driftRoute,
      driftReportRoute,
      contractsRoute,
      contractRoute,
      proofReceiptRoute,
    ]),
  ]),
]);

export function createAppRouter(queryClient: QueryClient) {
  return createRouter({
    routeTree,
    context: { queryClient },
    defaultPreload: 'intent',
    scrollRestoration: true,
  });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
}
