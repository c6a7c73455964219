// Permission names are the vocabulary of custom roles and the unit of every route's check.
export const permissionCatalog = {
  'organizations.read': 'Read the organization and its plan',
  'organizations.write': 'Rename the organization and change its settings',
  'organizations.delete': 'Delete the organization',
  'members.read': 'List members and invitations',
  'members.manage': 'Invite, remove and change the role of members',
  'roles.read': 'List roles',
  'roles.manage': 'Create, change and delete custom roles',
  'api_keys.read': 'List organization API keys',
  'api_keys.manage': 'Create, rotate, revoke and delete organization API keys',
  'events.read': 'Read the activity event log',
  'security_audit.read': 'Read the security-audit event log',
  'billing.read': 'Read the billing profile',
  'billing.write': 'Change the billing profile',
  'projects.read': 'Read projects',
  'projects.write': 'Create, change and delete projects',
  'environments.read': 'Read environments',
  'environments.write': 'Create, change, delete and restore environments',
  'secrets.read': 'List environment secret keys (never values)',
  'secrets.write': 'Write and delete environment secrets',
  'variables.read': 'Read runtime variables',
  'variables.write': 'Write and delete runtime variables',
  'data_sources.read': 'Read data sources (never credentials)',
  'data_sources.write': 'Create, change, delete data sources and their credentials',
  'data_sources.test': 'Test connections and import schemas',
  'queries.read': 'Read saved queries and their executions',
  'queries.write': 'Create, change and delete saved queries',
  'queries.execute': 'Execute saved queries',
  'pipelines.read': 'Read pipelines, versions, validations, deployments and runs',
  'pipelines.write': 'Create pipelines, push versions, bind data sources, validate',
  'pipelines.deploy': 'Deploy pipeline versions',
  'pipelines.execute': 'Execute pipelines and cancel runs',
  'alerts.read': 'Read notifications, alert policies, destinations and delivery attempts',
  'alerts.write': 'Manage alert policies and destinations',
  'notifications.manage': 'Acknowledge and resolve notifications',
} as const;

export type Permission = keyof typeof permissionCatalog;
export const allPermissions = Object.keys(permissionCatalog) as Permission[];

const viewer: Permission[] = [
  'organizations.read',
  'members.read',
  'roles.read',
  'events.read',
  'projects.read',
  'environments.read',
  'secrets.read',
  'variables.read',
  'data_sources.read',
  'queries.read',
  'pipelines.read',
  'alerts.read',
];
const operator: Permission[] = [
  ...viewer,
  'data_sources.test',
  'queries.execute',
  'pipelines.execute',
  'notifications.manage',
];
const developer: Permission[] = [
  ...operator,
  'projects.write',
  'secrets.write',
  'variables.write',
  'data_sources.write',
  'queries.write',
  'pipelines.write',
  'pipelines.deploy',
  'alerts.write',
];
const admin: Permission[] = allPermissions.filter((p) => p !== 'organizations.delete');

export const builtInRoles = {
  owner: {
    name: 'Owner',
    description: 'Full control, including deleting the organization',
    permissions: allPermissions,
  },
  admin: { name: 'Admin', description: 'Everything but deleting the organization', permissions: admin },
  developer: {
    name: 'Developer',
    description: 'Builds and deploys pipelines and connections',
    permissions: developer,
  },
  operator: {
    name: 'Operator',
    description: 'Runs pipelines and queries, handles alerts',
    permissions: operator,
  },
  viewer: {
    name: 'Viewer',
    description: 'Reads everything but secrets and the security log',
    permissions: viewer,
  },
} satisfies Record<string, { name: string; description: string; permissions: Permission[] }>;

export type BuiltInRole = keyof typeof builtInRoles;
export const builtInRoleSlugs = Object.keys(builtInRoles) as BuiltInRole[];

export function isBuiltInRole(slug: string): slug is BuiltInRole {
  return Object.hasOwn(builtInRoles, slug);
}

/** True when every permission of `candidate` is also held by `holder`. */
export function isSubset(candidate: Iterable<Permission>, holder: ReadonlySet<Permission>): boolean {
  for (const p of candidate) if (!holder.has(p)) return false;
  return true;
}

/** The read permission that lets a caller see a resource at all; without it, it is 404. */
export function visibilityOf(p: Permission): Permission {
  const [area] = p.split('.');
  const read = `${area}.read` as Permission;
  if (read in permissionCatalog) return read;
  if (area === 'notifications') return 'alerts.read';
  if (area === 'security_audit') return 'security_audit.read';
  return p;
}
