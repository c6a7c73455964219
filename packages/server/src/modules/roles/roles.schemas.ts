import { z } from 'zod';
import { nameSchema, orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema, pageMeta } from '../../http/pagination';
import { allPermissions, type Permission } from '../../permissions';

export const permissionNameSchema = z
  .enum(allPermissions as [Permission, ...Permission[]])
  .describe('Permission name from GET /permissions.');

const descriptionSchema = z.string().max(2000).nullable().describe('Free text, up to 2000 characters.');

export const roleSchema = z
  .object({
    slug: slugSchema.describe('Role slug, as used in members, invitations and API keys.'),
    name: storedNameSchema,
    description: descriptionSchema,
    permissions: z.array(permissionNameSchema).describe('Permissions the role grants.'),
    built_in: z
      .boolean()
      .describe('True for owner, admin, developer, operator and viewer, which cannot be changed.'),
    created_at: timestampSchema.describe('For a built-in role, when the organization was created.'),
    updated_at: timestampSchema,
  })
  .describe('A role: a named set of permissions, built in or custom to the organization.');

export const createRoleBody = z
  .object({
    name: nameSchema,
    slug: slugSchema
      .optional()
      .describe(
        'Optional client-chosen slug; generated from the name when absent. Built-in slugs are taken.',
      ),
    description: descriptionSchema.optional(),
    permissions: z
      .array(permissionNameSchema)
      .max(200)
      .describe('Permissions the role grants; only ones the caller holds.'),
  })
  .strict();

export const updateRoleBody = z
  .object({
    name: nameSchema.optional(),
    description: descriptionSchema.optional(),
    permissions: z
      .array(permissionNameSchema)
      .max(200)
      .optional()
      .describe('Replaces the permission list; only ones the caller holds.'),
  })
  .strict();

export const roleParams = z.object({ organization: orgSlugParam, role_slug: slugSchema }).strict();

export const roleSorts = ['role_created_at', 'role_updated_at', 'role_name'] as const;
export const listRolesQuery = listQuerySchema(roleSorts);
export const roleListSchema = listResponseSchema('roles', roleSchema);

export const permissionListSchema = z
  .object({
    permissions: z
      .array(
        z.object({
          name: permissionNameSchema,
          description: z.string().describe('What the permission allows.'),
        }),
      )
      .describe('Every permission a custom role can hold.'),
    ...pageMeta,
  })
  .describe('The permission catalog, always on one page (has_more false, cursors null).');
