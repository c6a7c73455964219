// The face of the oauth module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export {
  currentOrganizationGrant,
  emptyMetadata,
  type GrantRef,
  grantOf,
  markRevoked,
  metadataOf,
  type OAuthMetadata,
  openBundle,
  storeNewGrant,
} from './oauth.grants';
export {
  accountOf,
  authorizationUrl,
  exchangeCode,
  hashState,
  newPkce,
  newState,
  OAuthNotConfiguredError,
  type OAuthProvider,
  OAuthRejectedError,
  providerConfig,
  providerLabel,
  providerOfType,
  revokeToken,
} from './oauth.providers';
export { oauthAccess } from './oauth.tokens';
