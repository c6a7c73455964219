import net from 'node:net';
import { z } from 'zod';
import { allowPrivateHostsField, hostField, portField } from '../fields';
import { type Dialect, placeholderNames } from './placeholders';

// Config, credentials and statement shapes shared by the PostgreSQL and MySQL connectors.

export const sslModeSchema = z
  .object({
    mode: z
      .enum(['disable', 'require', 'verify-full'])
      .describe(
        'disable: plain TCP; require: TLS without checking the certificate; verify-full: TLS, certificate chain and host name checked.',
      ),
    ca: z
      .string()
      .min(1)
      .max(100_000)
      .optional()
      .describe('PEM certificate authority bundle to trust for verify-full (the system CAs otherwise).'),
  })
  .strict();

export const sslSchema = z
  .union([z.boolean(), sslModeSchema])
  .describe('TLS: false (default) = disable, true = verify-full, or {mode, ca?}.');

export type SslSetting = z.infer<typeof sslSchema>;

export function relationalConfigSchema(defaultPort: number, label: string) {
  return z
    .object({
      host: hostField.describe(`${label} server host name or IP address.`),
      port: portField(defaultPort),
      database: z.string().min(1).max(255).describe('Database to connect to.'),
      user: z.string().min(1).max(255).describe('User to connect as; the password goes in the credentials.'),
      ssl: sslSchema.default(false),
      connect_timeout_seconds: z
        .int()
        .min(1)
        .max(300)
        .default(5)
        .describe('Seconds to resolve, connect and authenticate, 1 to 300 (default 5).'),
      statement_timeout_seconds: z
        .int()
        .min(1)
        .max(300)
        .default(30)
        .describe('Seconds one statement may run before it is canceled, 1 to 300 (default 30).'),
      allow_private_hosts: allowPrivateHostsField,
    })
    .strict()
    .describe(`${label} connector configuration.`);
}

export type RelationalConfig = z.infer<ReturnType<typeof relationalConfigSchema>>;

export const passwordCredentialsSchema = z
  .object({
    password: z
      .string()
      .max(1024)
      .default('')
      .describe(
        'Password of the user; empty or omitted (`credentials: {}`) for a server that asks none, such as trust authentication. Write-only: encrypted at rest, never returned.',
      ),
  })
  .strict()
  .describe('Database credentials. Write-only.');

export type PasswordCredentials = z.infer<typeof passwordCredentialsSchema>;

export function sqlStatementSchema(dialect: Dialect) {
  return z
    .object({
      type: z.literal('sql').describe('Statement kind: sql.'),
      sql: z
        .string()
        .min(1)
        .max(100_000)
        .describe(
          'One SQL statement. `{{name}}` placeholders are sent as bound parameters, never spliced into the text.',
        ),
    })
    .strict()
    .superRefine((s, ctx) => {
      try {
        placeholderNames(s.sql, dialect);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['sql'], message: (err as Error).message });
      }
    });
}

export type SqlStatement = { type: 'sql'; sql: string };

export type TlsSettings = { rejectUnauthorized: boolean; ca?: string; servername?: string } | false;

/** TLS options for a connection to the checked address on behalf of `host`. */
export function tlsSettings(ssl: SslSetting, host: string): TlsSettings {
  const mode = ssl === true ? 'verify-full' : ssl === false ? 'disable' : ssl.mode;
  if (mode === 'disable') return false;
  const ca = typeof ssl === 'object' ? ssl.ca : undefined;
  // SNI and the certificate check use the configured name; an IP literal is checked as is.
  const servername = net.isIP(host) ? undefined : host;
  return {
    rejectUnauthorized: mode === 'verify-full',
    ...(ca ? { ca } : {}),
    ...(servername ? { servername } : {}),
  };
}
