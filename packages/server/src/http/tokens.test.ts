import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checksum, issueToken, parseToken } from './tokens';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The checksum as first specified: CRC32 of the UTF-8 bytes, big-endian, base62 by BigInt. */
function referenceChecksum(body: string): string {
  let c = 0xffffffff;
  for (const b of Buffer.from(body)) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  let n = BigInt((c ^ 0xffffffff) >>> 0);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(6, '0');
}

describe('token checksum', () => {
  it('matches the BigInt reference for random, empty and non-ASCII bodies', () => {
    const bodies = ['', 'a', 'slc_key_', 'é✓🙂', 'slc_pat_\u0080x'];
    for (let i = 0; i < 2000; i++) bodies.push(`slc_key_${randomBytes(32).toString('base64url')}`);
    for (const b of bodies) expect(checksum(b), b).toBe(referenceChecksum(b));
  });

  it('accepts issued tokens and refuses one changed character', () => {
    for (const kind of ['pat', 'key'] as const) {
      const { token } = issueToken(kind);
      expect(parseToken(token)).toBe(kind);
      const i = 20;
      const other = token[i] === 'A' ? 'B' : 'A';
      expect(parseToken(token.slice(0, i) + other + token.slice(i + 1))).toBeNull();
    }
  });
});
