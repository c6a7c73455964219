import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField, secretField, timeoutSecondsField } from '../fields';

export const identifier = (what: string) =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_$."-]+$/, 'letters, digits, _, $, ., - and quotes only')
    .describe(what);

export const snowflakeConfigSchema = z
  .object({
    account: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[A-Za-z0-9_.-]+$/, 'an account identifier such as `myorg-myaccount`')
      .describe('Account identifier (`orgname-accountname` or a locator such as `xy12345.eu-central-1`).'),
    username: identifier('User the connector signs in as.'),
    warehouse: identifier('Virtual warehouse that runs queries.').optional(),
    database: identifier('Default database.').optional(),
    schema: identifier('Default schema.').optional(),
    role: identifier('Role to use after signing in.').optional(),
    timeout_seconds: timeoutSecondsField(300, 5),
    access_url: httpUrlField(
      'Endpoint instead of `https://<account>.snowflakecomputing.com` (PrivateLink, a proxy). `http://` only with allow_private_hosts.',
    ).optional(),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .refine((c) => !c.access_url || c.access_url.startsWith('https://') || c.allow_private_hosts, {
    message: 'access_url must use https unless allow_private_hosts is true',
    path: ['access_url'],
  })
  .describe('Snowflake connector configuration.');

export const snowflakeCredentialsSchema = z
  .union([
    z.object({ password: secretField('Password of the user.') }).strict(),
    z
      .object({
        private_key: secretField('Private key (PEM) for key-pair authentication.').regex(
          /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
          'must be a PEM private key',
        ),
        private_key_passphrase: secretField('Passphrase of an encrypted private key.').optional(),
      })
      .strict(),
  ])
  .describe('Snowflake credentials: a password, or a private key (and its passphrase). Write-only.');

/** The parsed config and credentials as the session code reads them. */
export type SnowflakeConfig = {
  account: string;
  username: string;
  warehouse?: string;
  database?: string;
  schema?: string;
  role?: string;
  timeout_seconds: number;
  access_url?: string;
  allow_private_hosts?: boolean;
};

export type SnowflakeCredentials =
  | { password: string }
  | { private_key: string; private_key_passphrase?: string };
