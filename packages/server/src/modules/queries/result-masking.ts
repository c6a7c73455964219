import type { Connection } from '@sluice/connectors';
import { masker } from '@sluice/engine';

// A remote can answer with what it was sent: an API that echoes its request headers returns
// the bearer token, a database can select a password back. Query results are stored and shown
// to everyone with queries.read, so every credential value of the data source is masked in
// them before they are stored, as run logs mask secrets (`****`).

function leafTexts(value: unknown, out: string[] = []): string[] {
  if (value === null || value === undefined) return out;
  if (Array.isArray(value)) for (const v of value) leafTexts(v, out);
  else if (typeof value === 'object') for (const v of Object.values(value)) leafTexts(v, out);
  else out.push(String(value));
  return out;
}

/** The secret values of a connection, in the forms a remote may echo them. */
export function secretValuesOf(connection: Connection): string[] {
  const creds = connection.credentials ?? {};
  const values = leafTexts(creds);
  // HTTP Basic sends base64(user:password): that is how an echo carries it.
  const password = typeof creds.password === 'string' ? creds.password : undefined;
  const config = connection.config as Record<string, unknown>;
  for (const user of [creds.username, config.username, config.user]) {
    if (typeof user === 'string' && password !== undefined) {
      values.push(Buffer.from(`${user}:${password}`).toString('base64'));
    }
  }
  // A user name is not a secret; only values that are.
  return values.filter((v) => v !== creds.username && v !== creds.client_id && v !== creds.access_key_id);
}

/** A copy of `value` with every secret occurrence in its strings (keys included) masked. */
export function maskDeep<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === 'string') return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, mask)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[mask(k)] = maskDeep(v, mask);
    return out as T;
  }
  return value;
}

export function resultMasker(connection: Connection) {
  const mask = masker(secretValuesOf(connection));
  return <T>(value: T): T => maskDeep(value, mask);
}
