// Shapes of the API resources the screens read (the OpenAPI document is the full contract).

export type User = { slug: string; email: string; name: string };
export type Session = { user: User; expires_at: string; csrf_token: string };
export type Organization = { slug: string; name: string };
export type Project = { slug: string; name: string; description?: string | null };
export type Environment = {
  slug: string;
  name: string;
  protected: boolean;
  color?: string;
  is_default?: boolean;
  deleted_at?: string | null;
};
export type StepState = 'pending' | 'running' | 'succeeded' | 'failed' | 'canceled' | 'skipped';
export type RunState = 'queued' | 'running' | 'canceling' | 'succeeded' | 'failed' | 'canceled';
export type RunStep = {
  step_slug: string;
  state: StepState;
  rows_in: number;
  rows_out: number;
  bytes_in: number;
  bytes_out: number;
  started_at: string | null;
  finished_at: string | null;
  error: { code: string; message: string } | null;
};
export type Run = {
  slug: string;
  pipeline_slug: string;
  environment_slug: string;
  spec_hash: string;
  state: RunState;
  trigger: 'api' | 'schedule' | 'webhook' | 'retry';
  /** The pipeline trigger that started the run (schedule or webhook), null for api and retry. */
  trigger_slug: string | null;
  attempt: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  error: { code: string; message: string } | null;
  steps: RunStep[];
};
export type LogLine = {
  /** The line's number within its run, from 1. */
  seq: number;
  step_slug: string | null;
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  at: string;
};
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
export type Pipeline = {
  slug: string;
  name: string;
  description?: string | null;
  project_slug: string;
  latest_spec_hash: string | null;
  updated_at: string;
};
export type Version = { spec_hash: string; spec: Spec; created_at: string };
export type Finding = { code: string; message: string; path: string; severity: 'error' | 'warning' };
export type Validation = { slug: string; spec_hash: string; valid: boolean; findings: Finding[] };
export type Deployment = {
  slug: string;
  pipeline_slug: string;
  environment_slug: string;
  spec_hash: string;
  active: boolean;
  created_at: string;
};
export type Binding = {
  pipeline_slug: string;
  data_source_ref_slug: string;
  environment_slug: string;
  data_source_slug: string;
  data_source_name: string;
  data_source_type: string;
};
export type Ref = { slug: string; name: string; data_source_type?: string | null };
export type DataSource = {
  slug: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
  is_active: boolean;
  read_only: boolean;
  schema_status: 'not_imported' | 'importing' | 'failed' | 'ready';
  schema: Record<string, unknown>;
  credential?: Record<string, unknown>;
  last_tested_at: string | null;
  test_error: string | null;
  updated_at: string;
};
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
export type Connector = {
  type: string;
  label: string;
  config_schema: JsonSchema;
  credentials_schema: JsonSchema | null;
  credentials_required: boolean;
  default_read_only: boolean;
};
export type TestResult = { ok: boolean; tested_at: string; error: { code: string; message: string } | null };
export type EventRow = {
  slug?: string;
  id?: string;
  action: string;
  entity_type: string;
  entity_slug: string | null;
  actor: { type: string; slug: string | null } | null;
  created_at: string;
  metadata?: Record<string, unknown>;
  [k: string]: unknown;
};
