import { createHash, randomBytes } from 'node:crypto';
import { egressPolicy, guardedDispatcher, undici } from '@sluice/connectors';
import type { Config, OAuthProviderConfig } from '../../env';

// The OAuth 2.0 endpoints of the hosted git providers: authorization URL, code exchange (with
// PKCE), refresh, revocation and the connected account. Tokens live only in memory here and in
// the sealed credential; nothing in this file logs, and errors carry provider error codes only
// (never the provider's body, which may echo what we sent).

export type OAuthProvider = 'github' | 'gitlab';

export const providerOfType = (type: string): OAuthProvider | null =>
  type === 'github' || type === 'gitlab' ? type : null;

export const providerLabel = (p: OAuthProvider) => (p === 'github' ? 'GitHub' : 'GitLab');

/** What is sealed as the credential of an oauth2_grant. */
export type TokenBundle = {
  access_token: string;
  refresh_token: string | null;
  token_type: string;
  expires_at: string | null;
  refresh_token_expires_at: string | null;
};

export type TokenGrant = { bundle: TokenBundle; scopes: string[] | null };

/** The provider refused (bad code, PKCE mismatch, revoked refresh token): `error` is its code. */
export class OAuthRejectedError extends Error {
  constructor(
    readonly provider: OAuthProvider,
    readonly error: string,
  ) {
    super(`${providerLabel(provider)} refused the OAuth request (${error})`);
  }
}

/** The provider could not be reached or failed (network, 5xx): worth trying again later. */
export class OAuthUnavailableError extends Error {
  constructor(readonly provider: OAuthProvider) {
    super(`${providerLabel(provider)}'s OAuth endpoint could not be reached`);
  }
}

export class OAuthNotConfiguredError extends Error {
  constructor(readonly provider: OAuthProvider) {
    super(
      `OAuth for ${providerLabel(provider)} is not configured on this server (SLUICE_${provider.toUpperCase()}_OAUTH_CLIENT_ID and _CLIENT_SECRET)`,
    );
  }
}

export function providerConfig(config: Config, provider: OAuthProvider): OAuthProviderConfig {
  const c = config.oauth[provider];
  if (!c.clientId || !c.clientSecret) throw new OAuthNotConfiguredError(provider);
  return c;
}

const base64url = (b: Buffer) => b.toString('base64url');

export function newState() {
  const state = base64url(randomBytes(32));
  return { state, stateHash: hashState(state) };
}

export const hashState = (state: string) => createHash('sha256').update(state).digest('hex');

/** RFC 7636: a 43+ character verifier and its S256 challenge. */
export function newPkce() {
  const verifier = base64url(randomBytes(48));
  return { verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
}

export function authorizationUrl(
  c: OAuthProviderConfig,
  o: { state: string; challenge: string; redirectUri: string; scopes: string[] },
) {
  const u = new URL(c.authorizeUrl);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', c.clientId!);
  u.searchParams.set('redirect_uri', o.redirectUri);
  u.searchParams.set('scope', o.scopes.join(' '));
  u.searchParams.set('state', o.state);
  u.searchParams.set('code_challenge', o.challenge);
  u.searchParams.set('code_challenge_method', 'S256');
  return u.toString();
}

const TIMEOUT_MS = 15_000;
const MAX_BODY = 256 * 1024;

type Answer = { status: number; json: Record<string, unknown> | null };

/** One call to a provider endpoint through the egress guard. */
async function call(
  config: Config,
  provider: OAuthProvider,
  o: { method: string; url: string; headers: Record<string, string>; body?: string },
): Promise<Answer> {
  // The operator configured these URLs, so a self-hosted deployment may point them at a
  // private host (GitHub Enterprise, self-managed GitLab); hosted deployments never.
  const dispatcher = guardedDispatcher(egressPolicy(config.deployment, true));
  try {
    const res = await undici().request(o.url, {
      method: o.method as 'POST',
      headers: { accept: 'application/json', 'user-agent': 'sluice', ...o.headers },
      body: o.body,
      dispatcher,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    let text = '';
    for await (const chunk of res.body) {
      text += chunk.toString();
      if (text.length > MAX_BODY) {
        res.body.destroy();
        throw new OAuthUnavailableError(provider);
      }
    }
    let json: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed;
    } catch {
      json = null;
    }
    return { status: res.statusCode, json };
  } catch (err) {
    if (err instanceof OAuthUnavailableError) throw err;
    throw new OAuthUnavailableError(provider);
  } finally {
    void dispatcher.close();
  }
}

const form = (values: Record<string, string>) => new URLSearchParams(values).toString();

function tokenGrant(provider: OAuthProvider, a: Answer, previousRefresh: string | null): TokenGrant {
  const j = a.json;
  if (a.status >= 500 || (j === null && a.status !== 200)) throw new OAuthUnavailableError(provider);
  // GitHub answers refusals with 200 and an `error` field; GitLab with 400/401.
  if (!j || typeof j.error === 'string' || a.status !== 200 || typeof j.access_token !== 'string') {
    const code =
      j && typeof j.error === 'string'
        ? j.error.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64)
        : `http_${a.status}`;
    throw new OAuthRejectedError(provider, code || 'invalid_response');
  }
  const now = Date.now();
  const inMs = (v: unknown) =>
    typeof v === 'number' && v > 0 ? new Date(now + v * 1000).toISOString() : null;
  const scope = typeof j.scope === 'string' ? j.scope.split(/[\s,]+/).filter(Boolean) : null;
  return {
    bundle: {
      access_token: j.access_token,
      refresh_token:
        typeof j.refresh_token === 'string' && j.refresh_token ? j.refresh_token : previousRefresh,
      token_type: typeof j.token_type === 'string' ? j.token_type : 'bearer',
      expires_at: inMs(j.expires_in),
      refresh_token_expires_at: inMs(j.refresh_token_expires_in),
    },
    scopes: scope,
  };
}

export async function exchangeCode(
  config: Config,
  provider: OAuthProvider,
  o: { code: string; verifier: string; redirectUri: string },
): Promise<TokenGrant> {
  const c = providerConfig(config, provider);
  const answer = await call(config, provider, {
    method: 'POST',
    url: c.tokenUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form({
      grant_type: 'authorization_code',
      code: o.code,
      redirect_uri: o.redirectUri,
      client_id: c.clientId!,
      client_secret: c.clientSecret!,
      code_verifier: o.verifier,
    }),
  });
  return tokenGrant(provider, answer, null);
}

export async function refreshTokens(config: Config, provider: OAuthProvider, refreshToken: string) {
  const c = providerConfig(config, provider);
  const answer = await call(config, provider, {
    method: 'POST',
    url: c.tokenUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: c.clientId!,
      client_secret: c.clientSecret!,
    }),
  });
  return tokenGrant(provider, answer, refreshToken);
}

/** Revokes the token at the provider. A token the provider no longer knows counts as revoked. */
export async function revokeToken(config: Config, provider: OAuthProvider, accessToken: string) {
  const c = providerConfig(config, provider);
  let answer: Answer;
  if (provider === 'github') {
    // DELETE /applications/{client_id}/token revokes this one token (the grant route would
    // revoke every token the user gave the app, other data sources' included).
    const basic = Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64');
    answer = await call(config, provider, {
      method: 'DELETE',
      url: `${c.apiUrl}/applications/${encodeURIComponent(c.clientId!)}/token`,
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: accessToken }),
    });
  } else {
    answer = await call(config, provider, {
      method: 'POST',
      url: config.oauth.gitlab.revokeUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ client_id: c.clientId!, client_secret: c.clientSecret!, token: accessToken }),
    });
  }
  if (answer.status >= 500) throw new OAuthUnavailableError(provider);
  if (answer.status >= 400 && answer.status !== 404 && answer.status !== 422) {
    throw new OAuthRejectedError(provider, `http_${answer.status}`);
  }
}

/** The login of the account that granted access, for the credential metadata. */
export async function accountOf(config: Config, provider: OAuthProvider, accessToken: string) {
  const c = providerConfig(config, provider);
  const answer = await call(config, provider, {
    method: 'GET',
    url: `${c.apiUrl}/user`,
    headers: { authorization: `Bearer ${accessToken}` },
  });
  const login = answer.json?.[provider === 'github' ? 'login' : 'username'];
  return answer.status === 200 && typeof login === 'string' ? login.slice(0, 255) : null;
}
