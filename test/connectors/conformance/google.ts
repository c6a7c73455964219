import type { ConnectorContext } from '@sluice/connectors';
import { type TestServiceAccount, testServiceAccount } from '../../peers/google-oauth';
import { contextFor, type Target } from './fixture';

// What the Google kinds share: a service account whose token_uri is on the operator-set API
// root (ctx.endpoints.googleApiRoot), which is where these kinds connect.

// Generating a key blocks for a while: one trusted key and one stranger's for the whole suite.
let keys: { trusted: TestServiceAccount; stranger: TestServiceAccount } | null = null;

/** A service account with its token endpoint on this root; `stranger` signs with an untrusted key. */
export function accountFor(root: string, who: 'trusted' | 'stranger' = 'trusted'): TestServiceAccount {
  keys ??= {
    trusted: testServiceAccount('http://unused/token'),
    stranger: testServiceAccount('http://unused/token'),
  };
  const sa = keys[who];
  return { ...sa, json: JSON.stringify({ ...JSON.parse(sa.json), token_uri: `${root}/token` }) };
}

export const googleContext = (t: Target, root = `http://${t.host}:${t.port}`): ConnectorContext =>
  contextFor(t, { endpoints: { googleApiRoot: root } });
