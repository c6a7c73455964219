import { z } from 'zod';
import { allowPrivateHostsField, secretField } from '../fields';
import type { ConnectorDefinition } from '../types';

// The seed's git shapes: HTTPS or SSH remotes only (plain http:// is refused).

const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)[^\s]+$/;

export const gitConfigSchema = z
  .object({
    repo_url: z
      .string()
      .min(1)
      .max(2048)
      .refine((v) => {
        if (SCP_LIKE.test(v)) return true;
        try {
          const u = new URL(v);
          return (u.protocol === 'https:' || u.protocol === 'ssh:') && u.hostname !== '' && u.password === '';
        } catch {
          return false;
        }
      }, 'must be an https:// or ssh:// URL (or user@host:path); plain HTTP is not supported and credentials do not belong in the URL')
      .describe('Repository URL: `https://…`, `ssh://…` or `user@host:path`.'),
    default_branch: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Branch used when a statement names none.'),
    base_path: z
      .string()
      .max(1024)
      .optional()
      .describe('Directory inside the repository that paths are relative to.'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('Git connector configuration.');

export const gitCredentialsSchema = z
  .discriminatedUnion('auth_type', [
    z
      .object({
        auth_type: z.literal('https').describe('Authenticate over HTTPS.'),
        username: z.string().min(1).max(1024).optional().describe('HTTPS user name (some hosts accept any).'),
        token: secretField('HTTPS password or access token.').optional(),
      })
      .strict(),
    z
      .object({
        auth_type: z.literal('ssh').describe('Authenticate over SSH with a key.'),
        ssh_private_key: secretField('SSH private key (PEM/OpenSSH format).').regex(
          /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
          'must be a PEM or OpenSSH private key',
        ),
        ssh_passphrase: secretField('Passphrase of the private key.').optional(),
        ssh_known_hosts: z
          .string()
          .min(1)
          .max(65_536)
          .describe('known_hosts lines that pin the server host key (required for SSH).'),
      })
      .strict(),
  ])
  .describe('Git credentials by auth_type (https or ssh). Write-only.');

export const gitConnector: ConnectorDefinition = {
  type: 'git',
  label: 'Git',
  configSchema: gitConfigSchema,
  credentialsSchema: gitCredentialsSchema,
  credentialsRequired: true,
  defaultReadOnly: false,
  statementSchema: null,
  resultType: 'git',
};
