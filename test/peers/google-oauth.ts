// Google's OAuth 2.0 token endpoint for service accounts, as a fake mounted by the Google API
// fakes (bigquery-api.ts, google-workspace-api.ts) at `/token` of their own origin. It follows
// https://developers.google.com/identity/protocols/oauth2/service-account#httprest: a POST of
// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<RS256 JWT>` whose claims
// are iss (the client_email), scope, aud, iat and exp (at most one hour). The signature is
// verified with the public key of the test service account; a bad key, unknown issuer or an
// expired assertion answers 400 `{"error":"invalid_grant","error_description":...}`.
// Access tokens are opaque `ya29.` strings; the API fakes ask `bearer()` who holds one.
import { createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import type http from 'node:http';

export type TestServiceAccount = {
  email: string;
  /** The key file's JSON text (what a user pastes as service_account_json). */
  json: string;
  privateKey: string;
  publicKey: string;
};

/** A service account with a fresh RSA key, its token_uri pointing at a fake. */
export function testServiceAccount(
  tokenUri: string,
  email = 'sluice-test@test-project.iam.gserviceaccount.com',
): TestServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const json = JSON.stringify({
    type: 'service_account',
    project_id: 'test-project',
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey,
    client_email: email,
    client_id: '1234567890',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
  });
  return { email, json, privateKey, publicKey };
}

export type OAuthFake = {
  /** Registers the public key an issuer signs with. */
  trust(email: string, publicKey: string): void;
  /** Answers POST /token; false when the request is not for it. */
  handle(req: http.IncomingMessage, body: string, res: http.ServerResponse): boolean;
  /** The email and scopes behind `Authorization: Bearer …`, or null (unknown or revoked). */
  bearer(header: string | undefined): { email: string; scope: string } | null;
  /** Revokes every token issued so far and every later one (expired-token tests). */
  rejectTokens(on: boolean): void;
  tokensIssued(): number;
};

const b64json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

export function createOAuthFake(): OAuthFake {
  const keys = new Map<string, string>();
  const tokens = new Map<string, { email: string; scope: string; exp: number }>();
  let rejecting = false;
  let issued = 0;
  const deny = (res: http.ServerResponse, description: string) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'invalid_grant', error_description: description }));
  };
  return {
    trust: (email, publicKey) => keys.set(email, publicKey),
    handle(req, body, res) {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      if (path !== '/token' || req.method !== 'POST') return false;
      const form = new URLSearchParams(body);
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: 'unsupported_grant_type', error_description: 'Invalid grant_type.' }),
        );
        return true;
      }
      const parts = (form.get('assertion') ?? '').split('.');
      if (parts.length !== 3) {
        deny(res, 'Invalid JWT.');
        return true;
      }
      let header: { alg?: string };
      let claims: { iss?: string; scope?: string; aud?: string; exp?: number; iat?: number };
      try {
        header = b64json(parts[0]);
        claims = b64json(parts[1]);
      } catch {
        deny(res, 'Invalid JWT.');
        return true;
      }
      const key = claims.iss ? keys.get(claims.iss) : undefined;
      if (header.alg !== 'RS256' || !key) {
        deny(res, 'Invalid JWT Signature.');
        return true;
      }
      const ok = createVerify('RSA-SHA256')
        .update(`${parts[0]}.${parts[1]}`)
        .verify(key, Buffer.from(parts[2], 'base64url'));
      if (!ok) {
        deny(res, 'Invalid JWT Signature.');
        return true;
      }
      const now = Math.floor(Date.now() / 1000);
      if (!claims.exp || !claims.iat || claims.exp < now || claims.exp - claims.iat > 3600) {
        deny(
          res,
          'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.',
        );
        return true;
      }
      const token = `ya29.fake-${randomBytes(24).toString('base64url')}`;
      tokens.set(token, { email: claims.iss as string, scope: claims.scope ?? '', exp: now + 3600 });
      issued++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }));
      return true;
    },
    bearer(headerValue) {
      const m = /^Bearer (\S+)$/.exec(headerValue ?? '');
      const t = m ? tokens.get(m[1]) : undefined;
      if (!t || rejecting || t.exp < Date.now() / 1000) return null;
      return { email: t.email, scope: t.scope };
    },
    rejectTokens(on) {
      rejecting = on;
    },
    tokensIssued: () => issued,
  };
}

/** Google's JSON error body (`{"error": {code, message, errors: [{reason}], status}}`). */
export function googleErrorBody(code: number, reason: string, message: string, status: string) {
  return JSON.stringify({
    error: { code, message, errors: [{ message, domain: 'global', reason }], status },
  });
}

export function sendGoogleError(res: http.ServerResponse, code: number, reason: string, message: string) {
  const status =
    code === 401
      ? 'UNAUTHENTICATED'
      : code === 403
        ? 'PERMISSION_DENIED'
        : code === 404
          ? 'NOT_FOUND'
          : code === 429
            ? 'RESOURCE_EXHAUSTED'
            : code === 400
              ? 'INVALID_ARGUMENT'
              : 'INTERNAL';
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(googleErrorBody(code, reason, message, status));
}

/** Reads a request body as text. */
export function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
