import { z } from 'zod';
import { nameSchema, orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

const descriptionSchema = z
  .string()
  .max(2000)
  .nullable()
  .describe('Free text up to 2000 characters, or null.');

export const projectSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    description: descriptionSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A project: groups pipelines and the environments they run in.');

export const createProjectBody = z
  .object({
    name: nameSchema,
    description: descriptionSchema.optional(),
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
  })
  .strict();

export const updateProjectBody = z
  .object({
    name: nameSchema.optional(),
    description: descriptionSchema.optional(),
  })
  .strict();

export const projectParams = z.object({ organization: orgSlugParam, project: slugSchema }).strict();

export const projectSorts = ['project_created_at', 'project_updated_at', 'project_name'] as const;
export const listProjectsQuery = listQuerySchema(projectSorts);
export const projectListSchema = listResponseSchema('projects', projectSchema);
