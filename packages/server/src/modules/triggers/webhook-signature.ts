import { createHmac, timingSafeEqual } from 'node:crypto';

// Standard Webhooks (docs/triggers.md#delivering): `webhook-signature` is a space-separated list of
// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the base64 part of `whsec_…`.

export const TOLERANCE_SECONDS = 300;

export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

export function sign(secret: string, id: string, timestamp: number | string, body: Buffer | string): string {
  const mac = createHmac('sha256', secretKey(secret));
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return mac.digest('base64');
}

/** The three headers a sender sends for `body` at `timestamp` (seconds). */
export function signedHeaders(secret: string, id: string, timestamp: number, body: Buffer | string) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${sign(secret, id, timestamp, body)}`,
  };
}

/** The v1 signatures of a header value, decoded; anything else in the list is ignored. */
export function v1Signatures(header: string): Buffer[] {
  const out: Buffer[] = [];
  for (const part of header.trim().split(/\s+/)) {
    const [version, value] = part.split(',', 2);
    if (version === 'v1' && value) out.push(Buffer.from(value, 'base64'));
  }
  return out;
}

/** Index of the first secret any of the signatures matches, compared in constant time; else -1. */
export function matchingSecret(
  secrets: string[],
  id: string,
  timestamp: string,
  body: Buffer,
  header: string,
): number {
  const given = v1Signatures(header);
  for (const [i, secret] of secrets.entries()) {
    const expected = Buffer.from(sign(secret, id, timestamp, body), 'base64');
    let hit = false;
    for (const g of given) {
      // Evaluate every candidate so timing does not reveal which one matched.
      if (g.length === expected.length && timingSafeEqual(g, expected)) hit = true;
    }
    if (hit) return i;
  }
  return -1;
}
