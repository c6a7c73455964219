import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { canonicalJson } from '@sluice/engine/canonical-json';

// DSSE envelopes over in-toto Statements, signed with Ed25519. Kept free of the database and
// HTTP so that `sluice proof verify` checks a receipt offline with nothing but public keys.

export const PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const PREDICATE_TYPE = 'https://sluice.dev/attestation/data-proof/v1';

export type Envelope = { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] };
export type PublicKeyRecord = { keyid: string; public_key_pem: string };

/** DSSE's pre-authentication encoding: what is signed, binding the payload to its type. */
export function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, 'utf8'),
    type,
    Buffer.from(` ${payload.length} `, 'utf8'),
    payload,
  ]);
}

/** keyid: SHA-256 (hex) of the raw 32-byte Ed25519 public key. */
export function keyidOf(publicKey: KeyObject): string {
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  return createHash('sha256').update(raw).digest('hex');
}

export function signStatement(statement: unknown, privateKey: KeyObject, keyid: string): Envelope {
  const payload = Buffer.from(canonicalJson(statement), 'utf8');
  const sig = sign(null, pae(PAYLOAD_TYPE, payload), privateKey);
  return {
    payloadType: PAYLOAD_TYPE,
    payload: payload.toString('base64'),
    signatures: [{ keyid, sig: sig.toString('base64') }],
  };
}

/** The receipt digest that chains receipts: SHA-256 of the envelope's canonical JSON. */
export function envelopeDigest(envelope: Envelope): string {
  return createHash('sha256').update(canonicalJson(envelope)).digest('hex');
}

export type Verification = { ok: true; statement: any; keyid: string } | { ok: false; reason: string };

/** Checks the signature against the trusted keys and answers the statement it signs. */
export function verifyEnvelope(envelope: Envelope, keys: PublicKeyRecord[]): Verification {
  if (!envelope || envelope.payloadType !== PAYLOAD_TYPE || typeof envelope.payload !== 'string')
    return { ok: false, reason: `not a DSSE envelope of ${PAYLOAD_TYPE}` };
  const payload = Buffer.from(envelope.payload, 'base64');
  for (const s of envelope.signatures ?? []) {
    const key = keys.find((k) => k.keyid === s.keyid);
    if (!key) continue;
    const publicKey = createPublicKey(key.public_key_pem);
    if (keyidOf(publicKey) !== key.keyid)
      return { ok: false, reason: `key ${key.keyid} does not match its keyid` };
    if (!verify(null, pae(envelope.payloadType, payload), publicKey, Buffer.from(s.sig, 'base64')))
      return { ok: false, reason: `the signature by ${s.keyid} does not verify` };
    let statement: any;
    try {
      statement = JSON.parse(payload.toString('utf8'));
    } catch {
      return { ok: false, reason: 'the payload is not JSON' };
    }
    if (statement?._type !== STATEMENT_TYPE || statement.predicateType !== PREDICATE_TYPE)
      return { ok: false, reason: 'the payload is not a Sluice data-proof statement' };
    return { ok: true, statement, keyid: s.keyid };
  }
  return { ok: false, reason: 'no signature by a trusted key' };
}

export type ChainLink = {
  slug: string;
  sequence: number;
  digest: string;
  prev_receipt_digest: string | null;
  envelope: Envelope;
};

/**
 * Checks receipts of one data source as a hash chain: each digest is its envelope's, each
 * names the one before it, and the sequence has no gap (a removed receipt breaks it).
 */
export function verifyChain(links: ChainLink[]): { ok: true } | { ok: false; reason: string } {
  const sorted = [...links].sort((a, b) => a.sequence - b.sequence);
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i];
    if (envelopeDigest(r.envelope) !== r.digest)
      return { ok: false, reason: `${r.slug}: digest does not match its envelope` };
    const predicate = JSON.parse(Buffer.from(r.envelope.payload, 'base64').toString('utf8')).predicate;
    if ((predicate?.prev_receipt_digest ?? null) !== r.prev_receipt_digest)
      return { ok: false, reason: `${r.slug}: prev_receipt_digest differs from the signed one` };
    if (i === 0) {
      if (r.sequence === 1 && r.prev_receipt_digest !== null)
        return { ok: false, reason: `${r.slug}: the first receipt names a predecessor` };
      continue;
    }
    const prev = sorted[i - 1];
    if (r.sequence !== prev.sequence + 1)
      return {
        ok: false,
        reason: `receipt ${prev.sequence + 1} is missing between ${prev.slug} and ${r.slug}`,
      };
    if (r.prev_receipt_digest !== prev.digest)
      return { ok: false, reason: `${r.slug} does not follow ${prev.slug} (prev_receipt_digest differs)` };
  }
  return { ok: true };
}
