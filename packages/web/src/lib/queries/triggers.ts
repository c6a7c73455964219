import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, type Ok, type QueryOf, unwrap } from '../api';
import { fetchPipelines } from './pipelines';
import type { Confirm, EnvPath, EnvPipelinePath } from './places';

export type { Confirm };

export type Trigger = Ok<'getProjectsEnvironmentsPipelinesTriggers'>;
/** A saved trigger as create answers it (with the webhook's signing secret, once). */
export type CreatedTrigger = Exclude<Ok<'createProjectsEnvironmentsPipelinesTriggers'>, { dry_run: true }>;
export type Occurrence = Ok<'listProjectsEnvironmentsPipelinesTriggersOccurrences'>['occurrences'][number];
export type Delivery = Ok<'listProjectsEnvironmentsPipelinesTriggersDeliveries'>['deliveries'][number];
export type TriggerPath = EnvPipelinePath & { pipeline_trigger_slug: string };
/** Where a trigger is created (no slug yet) or changed. */
export type TriggerTarget = EnvPipelinePath & { pipeline_trigger_slug?: string };
export type TriggerBody = BodyOf<'createProjectsEnvironmentsPipelinesTriggers'>;
export type TriggerPatch = BodyOf<'updateProjectsEnvironmentsPipelinesTriggers'>;
type Page = { outcome?: string; cursor?: string; direction?: string };

export const triggerKeys = {
  all: (org: string) => ['triggers', org] as const,
  list: (p: EnvPipelinePath) =>
    [...triggerKeys.all(p.organization), 'list', p.project, p.environment, p.pipeline] as const,
  ofEnvironment: (p: Partial<EnvPath>) =>
    [...triggerKeys.all(p.organization ?? ''), 'environment', p.project, p.environment] as const,
  one: (p: TriggerPath) => [...triggerKeys.list(p), p.pipeline_trigger_slug] as const,
  occurrences: (p: TriggerPath, page: Page) => [...triggerKeys.one(p), 'occurrences', page] as const,
  deliveries: (p: TriggerPath, page: Page) => [...triggerKeys.one(p), 'deliveries', page] as const,
};

const collection =
  '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/triggers';
const one = `${collection}/{pipeline_trigger_slug}` as const;

const fetchTriggers = (p: EnvPipelinePath) =>
  unwrap(client.GET(collection, { params: { path: p, query: { limit: 100 } } }));

export const triggersQuery = (p: EnvPipelinePath) =>
  queryOptions({
    queryKey: triggerKeys.list(p),
    enabled: Boolean(p.environment),
    queryFn: () => fetchTriggers(p),
  });

/** Every trigger of every pipeline of one project environment. */
export const environmentTriggersQuery = (p: Partial<EnvPath>) =>
  queryOptions({
    queryKey: triggerKeys.ofEnvironment(p),
    enabled: Boolean(p.organization && p.project && p.environment),
    queryFn: async () => {
      const env = p as EnvPath;
      const pipelines = await fetchPipelines(env);
      const lists = await Promise.all(
        pipelines.pipelines.map((x) => fetchTriggers({ ...env, pipeline: x.slug })),
      );
      return lists.flatMap((l) => l.pipeline_triggers);
    },
  });

export const triggerQuery = (p: TriggerPath) =>
  queryOptions({
    queryKey: triggerKeys.one(p),
    enabled: Boolean(p.environment),
    queryFn: () => unwrap(client.GET(one, { params: { path: p } })),
  });

export const occurrencesQuery = (p: TriggerPath, page: Page) =>
  queryOptions({
    queryKey: triggerKeys.occurrences(p, page),
    queryFn: () =>
      unwrap(
        client.GET(`${one}/occurrences`, {
          params: {
            path: p,
            query: { limit: 50, ...page } as QueryOf<'listProjectsEnvironmentsPipelinesTriggersOccurrences'>,
          },
        }),
      ),
  });

export const deliveriesQuery = (p: TriggerPath, page: Page) =>
  queryOptions({
    queryKey: triggerKeys.deliveries(p, page),
    queryFn: () =>
      unwrap(
        client.GET(`${one}/deliveries`, {
          params: {
            path: p,
            query: {
              limit: 50,
              cursor: page.cursor,
              direction: page.direction,
            } as QueryOf<'listProjectsEnvironmentsPipelinesTriggersDeliveries'>,
          },
        }),
      ),
  });

// Without dry_run the answer is the saved trigger, never a preview.
export const createTrigger = (p: EnvPipelinePath, body: TriggerBody, confirm: Confirm) =>
  unwrap(client.POST(collection, { params: { path: p, query: confirm }, body })) as Promise<CreatedTrigger>;

export const updateTrigger = (p: TriggerPath, body: TriggerPatch, confirm: Confirm) =>
  unwrap(client.PATCH(one, { params: { path: p, query: confirm }, body })) as Promise<
    Exclude<Ok<'updateProjectsEnvironmentsPipelinesTriggers'>, { dry_run: true }>
  >;

/** The next fire times the schedule as typed would have (`?dry_run=true`; nothing is saved). */
export const previewSchedule = (p: TriggerTarget, body: unknown, confirm: Confirm) => {
  const query = { ...confirm, dry_run: 'true' as const };
  const { pipeline_trigger_slug, ...path } = p;
  return pipeline_trigger_slug
    ? unwrap(
        client.PATCH(one, {
          params: { path: { ...path, pipeline_trigger_slug }, query },
          body: body as TriggerPatch,
        }),
      )
    : unwrap(client.POST(collection, { params: { path, query }, body: body as TriggerBody }));
};

export const rotateTriggerSecret = (p: TriggerPath, previousValidForSeconds: number, confirm: Confirm) =>
  unwrap(
    client.POST(`${one}:rotate-secret`, {
      params: { path: p, query: confirm },
      body: { previous_valid_for_seconds: previousValidForSeconds },
    }),
  );

export const deleteTrigger = (p: TriggerPath, confirm: Confirm) =>
  unwrap(client.DELETE(one, { params: { path: p, query: confirm } }));
