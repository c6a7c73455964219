import { ApiError } from '@sluice/client';
import { credentialsFromEnv, credentialsFromStdin } from '../credentials';
import { call } from '../resource';
import { changedFields, orNull, pick, requireSlugs } from './compare';
import type { ApplyContext, Doc, ResourceKind } from './types';

const FIELDS = ['name', 'config', 'is_active', 'read_only'];
const item = (org: string, slug: string) => ({ organization: org, data_source: slug });

/**
 * Credentials never sit in the file: `credentials_from_env` maps each credential field to an
 * environment variable, `credentials_from_stdin: true` reads one object from standard input.
 */
async function credentialsOf(ctx: ApplyContext, doc: Doc): Promise<Record<string, unknown> | undefined> {
  const map = doc.credentials_from_env as Record<string, unknown> | undefined;
  const fromEnv = map ? credentialsFromEnv(map, `DataSource ${doc.slug}.credentials_from_env`, ctx.env) : {};
  if (!doc.credentials_from_stdin && !map) return undefined;
  return { ...(doc.credentials_from_stdin ? await credentialsFromStdin() : {}), ...fromEnv };
}

/** A 400 about an unknown `credentials` field of the PATCH body. */
function refusedCredentialsField(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    err.status === 400 &&
    err.validationErrors.some((v) => `${v.path} ${v.message}`.includes('credentials'))
  );
}

/**
 * `kind: DataSource` with `slug`, `type`, `name`, `config`, `is_active`, `read_only` and
 * `credentials_from_env` / `credentials_from_stdin`. Credentials are write-only, so they are
 * sent on create and whenever the rest changes, never compared.
 */
export const dataSourceKind: ResourceKind = {
  kind: 'DataSource',
  order: 10,
  check: (doc) => [
    ...requireSlugs(doc, ['slug']),
    ...(typeof doc.type === 'string' ? [] : ['type: required (http, postgres, mysql, …)']),
    ...('credentials' in doc
      ? ['credentials: not in files; use credentials_from_env or credentials_from_stdin']
      : []),
  ],
  key: (doc) => String(doc.slug),
  async plan(ctx, doc) {
    const have = await orNull(
      call(ctx.client, 'GET', '/organizations/{organization}/data-sources/{data_source}', {
        path: item(ctx.org, String(doc.slug)),
      }),
    );
    if (!have) return { action: 'create', changes: [] };
    const changes = changedFields(pick(doc, [...FIELDS, 'type']), have.data);
    return { action: changes.length ? 'update' : 'unchanged', changes };
  },
  async apply(ctx, doc, change) {
    const slug = String(doc.slug);
    const credentials = await credentialsOf(ctx, doc);
    if (change.action === 'create') {
      await call(ctx.client, 'POST', '/organizations/{organization}/data-sources', {
        path: { organization: ctx.org },
        body: { name: slug, ...pick(doc, [...FIELDS, 'type']), slug, credentials: credentials ?? {} },
      });
      return;
    }
    const patch = (body: Record<string, unknown>) =>
      call(ctx.client, 'PATCH', '/organizations/{organization}/data-sources/{data_source}', {
        path: item(ctx.org, slug),
        body,
      });
    if (credentials) {
      // A server that wants the credentials again when the address changes takes them in the
      // same PATCH; one that does not know the field refuses it, and they go by PUT instead.
      try {
        await patch({ ...pick(doc, FIELDS), credentials });
        return;
      } catch (err) {
        if (!refusedCredentialsField(err)) throw err;
      }
    }
    await patch(pick(doc, FIELDS));
    if (credentials) {
      await call(ctx.client, 'PUT', '/organizations/{organization}/data-sources/{data_source}/credentials', {
        path: item(ctx.org, slug),
        body: { credentials },
      });
    }
  },
  async remove(ctx, key) {
    await call(ctx.client, 'DELETE', '/organizations/{organization}/data-sources/{data_source}', {
      path: item(ctx.org, key),
    });
  },
};
