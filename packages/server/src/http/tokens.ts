import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

// Token format (docs/api-conventions.md#tokens): `slc_pat_` or `slc_key_`, 32 random bytes in
// base62, and a 6-character base62 CRC32 of the body, so secret scanners (and we) can reject typos
// offline.
export type TokenKind = 'pat' | 'key';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const PREFIX_LENGTH = 12;

function base62(bytes: Buffer, width: number): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(width, '0');
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

function crc32(s: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < s.length; i++) {
    const b = s.charCodeAt(i);
    // Tokens are ASCII, whose characters are their UTF-8 bytes; anything else is encoded first.
    if (b > 0x7f) return crc32Bytes(Buffer.from(s));
    c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}

function crc32Bytes(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The CRC32 in 6 base62 digits (62⁶ > 2³²): checked on every request, so plain numbers, no BigInt. */
export function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export type IssuedToken = { token: string; prefix: string; hash: string };

export function issueToken(kind: TokenKind): IssuedToken {
  const body = `slc_${kind}_${base62(randomBytes(32), BODY_LENGTH)}`;
  const token = body + checksum(body);
  return { token, prefix: token.slice(0, PREFIX_LENGTH), hash: hashToken(token) };
}

/**
 * Tokens carry 256 random bits, so a fast hash is enough; a slow KDF would only cost latency.
 * The one-shot `hash` (no Hash object) is a fifth of createHash's cost on a token.
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

export function parseToken(token: string): TokenKind | null {
  const m = /^slc_(pat|key)_[0-9A-Za-z]{49}$/.exec(token);
  if (!m) return null;
  const body = token.slice(0, -6);
  return checksum(body) === token.slice(-6) ? (m[1] as TokenKind) : null;
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Opaque one-time secrets (email verification) reuse the same randomness and hashing. */
export function issueSecret(): { secret: string; hash: string } {
  const secret = base62(randomBytes(32), BODY_LENGTH);
  return { secret, hash: hashToken(secret) };
}
