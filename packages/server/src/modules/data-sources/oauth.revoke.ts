import type { Deps } from '../../context';
import { grantOf, openBundle, providerOfType, revokeToken } from '../oauth/index';

import * as dsRepo from './data-sources.repo';

/**
 * Before a data source with its own OAuth grant is deleted: revoke the token at the provider,
 * best effort (the deletion goes on if the provider cannot be reached; the token is forgotten
 * with the row either way). A shared organization grant is left alone: other sources use it.
 */
export async function revokeBeforeDelete(
  deps: Pick<Deps, 'db' | 'config' | 'keyring' | 'log'>,
  row: dsRepo.DataSourceRow,
) {
  const provider = providerOfType(row.type);
  if (!provider || row.organizationGitlabConnection) return;
  try {
    const ref = await grantOf(deps.db, row, provider, await dsRepo.currentCredential(deps.db, row.id));
    if (!ref || (ref.row.status !== 'active' && ref.row.status !== 'failed')) return;
    const bundle = await openBundle(deps.db, deps, ref);
    if (bundle) await revokeToken(deps.config, provider, bundle.access_token);
  } catch (err) {
    deps.log.warn(
      { dataSource: row.slug, provider, reason: (err as Error).name },
      'oauth token not revoked at deletion',
    );
  }
}
