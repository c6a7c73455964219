import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { CommandError } from './mongo-query';

// Server side of SCRAM-SHA-256 (RFC 5802 / 7677) as MongoDB runs it over saslStart and
// saslContinue: the peer keeps only the salted keys of each user, like a real server, and
// checks the client's proof, so a wrong password fails as on a real server.

const ITERATIONS = 4096;

export type ScramUser = { salt: Buffer; storedKey: Buffer; serverKey: Buffer };

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

export function scramUser(password: string): ScramUser {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  return { salt, storedKey: sha256(hmac(salted, 'Client Key')), serverKey: hmac(salted, 'Server Key') };
}

export const authFailed = () => new CommandError(18, 'AuthenticationFailed', 'Authentication failed.');

function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return out;
}

/** One conversation: the first message starts it, the final one proves the password. */
export class ScramConversation {
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';
  user = '';

  constructor(private readonly lookup: (user: string) => ScramUser | undefined) {}

  start(clientFirst: string): string {
    // gs2 header "n,," (no channel binding, no authzid), then the bare message.
    if (!clientFirst.startsWith('n,')) throw authFailed();
    this.clientFirstBare = clientFirst.slice(clientFirst.indexOf(',', 2) + 1);
    const attrs = attributes(this.clientFirstBare);
    this.user = (attrs.get('n') ?? '').replace(/=2C/g, ',').replace(/=3D/g, '=');
    const clientNonce = attrs.get('r');
    if (!clientNonce) throw authFailed();
    this.nonce = clientNonce + randomBytes(18).toString('base64');
    // An unknown user gets a made-up salt, so the answer does not tell whether the user exists.
    const salt = this.lookup(this.user)?.salt ?? randomBytes(16);
    this.serverFirst = `r=${this.nonce},s=${salt.toString('base64')},i=${ITERATIONS}`;
    return this.serverFirst;
  }

  finish(clientFinal: string): string {
    const user = this.lookup(this.user);
    const proofAt = clientFinal.lastIndexOf(',p=');
    if (!user || proofAt < 0) throw authFailed();
    const withoutProof = clientFinal.slice(0, proofAt);
    if (attributes(withoutProof).get('r') !== this.nonce) throw authFailed();
    const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const signature = hmac(user.storedKey, authMessage);
    if (proof.length !== signature.length) throw authFailed();
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i] ^ signature[i];
    if (!timingSafeEqual(sha256(clientKey), user.storedKey)) throw authFailed();
    return `v=${hmac(user.serverKey, authMessage).toString('base64')}`;
  }
}
