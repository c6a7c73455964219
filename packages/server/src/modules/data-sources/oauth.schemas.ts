import { z } from 'zod';
import { orgSlugParam, slugSchema } from '../../http/fields';
import { credentialMetadataSchema } from './data-sources.schemas';

export const dataSourceParams = z.object({ organization: orgSlugParam, data_source: slugSchema }).strict();

export const authorizeBody = z
  .object({
    connection_revision: z
      .int()
      .min(1)
      .optional()
      .describe('The connection_revision the caller saw; a different current revision answers 409.'),
  })
  .strict()
  .describe('Optional. Binds the request to a connection_revision.');

export const authorizeResultSchema = z
  .object({
    authorization_url: z
      .string()
      .describe(
        "The provider's consent page. Send the user's browser there; the provider redirects back to GET /oauth/callback. Single use, expires after SLUICE_OAUTH_STATE_TTL_SECONDS (default 10 minutes).",
      ),
    connection_revision: z
      .int()
      .describe(
        'The revision the request is bound to; any change of the data source before the callback invalidates it.',
      ),
  })
  .describe('An OAuth authorization request (authorization code flow with PKCE S256).');

export const callbackQuery = z
  .object({
    code: z.string().max(2048).optional().describe('Authorization code from the provider.'),
    state: z.string().max(512).optional().describe('The state the authorization URL carried.'),
    error: z.string().max(255).optional().describe('Provider error (for example access_denied).'),
    error_description: z.string().max(2048).optional().describe('Provider error text (ignored).'),
  })
  .describe('Query of the provider redirect. Unknown parameters are ignored.');

export const callbackResultSchema = z
  .object({
    organization_slug: z.string().describe('Organization of the data source.'),
    data_source_slug: slugSchema,
    connection_revision: z.int().describe('The new connection_revision (the grant changed it).'),
    credential: credentialMetadataSchema,
  })
  .describe('The authorization completed: the credential is active. Tokens are never returned.');
