// The API resources the screens read, as the generated client (the OpenAPI document) defines
// them: a renamed or removed field fails the web typecheck instead of the browser at run time.
import type { Ok } from './api';

export type User = Ok<'getUsersMe'>;
/** The app host's session (its own route, outside the API document) around the API's user. */
export type Session = { user: Pick<User, 'slug' | 'email' | 'name'>; expires_at: string; csrf_token: string };
export type Organization = Ok<'listOrganizations'>['organizations'][number];
export type Project = Ok<'listProjects'>['projects'][number];
export type Environment = Ok<'listProjectsEnvironments'>['environments'][number];
export type OrgEnvironment = Ok<'listEnvironments'>['environments'][number];
export type Run = Ok<'getProjectsEnvironmentsRuns'>;
export type RunState = Run['state'];
export type RunStep = Run['steps'][number];
export type StepState = RunStep['state'];
export type LogLine = Ok<'listProjectsEnvironmentsRunsLogs'>['logs'][number];
export type Pipeline = Ok<'getProjectsPipelines'>;
export type Version = Ok<'getProjectsPipelinesVersions'>;
/**
 * The API serves a stored spec as an open object (docs/pipeline-spec.md defines it); these are
 * the members the DAG and the deploy screen read from it.
 */
export type Step = {
  slug: string;
  kind: 'source' | 'transform' | 'sink';
  data_source_ref?: string;
  operation?: unknown;
};
export type Spec = {
  steps: Step[];
  edges?: { from: string; to: string }[];
  inputs?: Record<string, unknown>;
};
/** A version's spec read as a `Spec`. */
export const specOf = (v: Pick<Version, 'spec'>) => v.spec as unknown as Spec;
export type Validation = Ok<'createProjectsEnvironmentsPipelineValidation'>;
export type Finding = Validation['findings'][number];
export type Deployment = Ok<'listProjectsEnvironmentsDeployments'>['deployments'][number];
export type Binding = Ok<'listProjectsEnvironmentsDataSourceBindings'>['data_source_bindings'][number];
export type Ref = Ok<'listProjectsPipelinesDataSourceRefs'>['data_source_refs'][number];
export type DataSource = Ok<'getDataSources'>;
export type Connector = Ok<'listConnectors'>['connectors'][number];
export type TestResult = Ok<'testDataSourceConnection'>;
export type EventRecord = Ok<'listEvents'>['events'][number];

/** The JSON Schema vocabulary the connector forms render (a UI reading of `config_schema`). */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  const?: unknown;
};
