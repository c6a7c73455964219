// Pipeline triggers as the API answers them (docs/triggers.md).
import type { Ok } from '../lib/api';
import type { Trigger } from '../lib/queries/triggers';

export type { Occurrence, Trigger } from '../lib/queries/triggers';
export type Schedule = NonNullable<Trigger['schedule']>;
export type Secret = NonNullable<Trigger['webhook']>['secrets'][number];
/** The answer of a create or change with `?dry_run=true`: the next fire times, nothing saved. */
export type Preview = Extract<Ok<'createProjectsEnvironmentsPipelinesTriggers'>, { tz_version: string }>;
