import { z } from 'zod';

// Config fields several connector kinds share. Every field is described, because these
// schemas become the OpenAPI document and the docs of each connector.

export const allowPrivateHostsField = z
  .boolean()
  .default(false)
  .describe(
    'Allow loopback and private-network hosts. Self-hosted deployments only; hosted deployments reject true.',
  );

export const hostField = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s/@]+$/, 'a host name or IP address, without scheme, path or credentials')
  .describe('Host name or IP address.');

export const portField = (defaultPort: number) =>
  z.int().min(1).max(65535).default(defaultPort).describe(`TCP port, 1 to 65535 (default ${defaultPort}).`);

export const timeoutSecondsField = (max: number, def: number) =>
  z.int().min(1).max(max).default(def).describe(`Timeout in seconds, 1 to ${max} (default ${def}).`);

/** A URL a connector calls: http(s) only, and no user:password inside (that is what credentials are for). */
export const httpUrlField = (what: string) =>
  z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .refine((v) => {
      // zod runs this even when the URL check above failed: a value URL cannot parse is
      // already reported there, not thrown from here.
      if (!URL.canParse(v)) return true;
      const u = new URL(v);
      return u.username === '' && u.password === '';
    }, 'must not contain credentials; put them in credentials')
    .describe(what);

export const secretField = (what: string) => z.string().min(1).max(65_536).describe(`${what} Write-only.`);

/** A service-account key file as JSON text (Google Cloud kinds). */
export const serviceAccountJsonField = z
  .string()
  .min(2)
  .max(65_536)
  .refine((v) => {
    try {
      const parsed = JSON.parse(v);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
    } catch {
      return false;
    }
  }, 'must be the JSON text of a service-account key file')
  .describe('Service-account key file (JSON text). Write-only, encrypted at rest, never returned.');
