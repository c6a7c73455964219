import { startWorkspaceFake } from '../../peers/google-workspace-api';
import { type ConformanceFixture, configOf, SUITE_ANSWER_TIMEOUT_MS, type Target } from './fixture';
import { accountFor, googleContext } from './google';

// Google Workspace: the fake Sheets and Drive APIs (JWT flow) at the operator-set API root.

export const googleWorkspaceFixture: ConformanceFixture = {
  at: (t: Target) => {
    const ctx = googleContext(t);
    const root = ctx.endpoints?.googleApiRoot ?? '';
    return {
      conn: {
        config: configOf('google_workspace', { spreadsheet_id: 'sheet-unused' }),
        credentials: { service_account_json: accountFor(root).json },
      },
      ctx,
    };
  },
  // The suite's answer timeout, in place of the kind's own 60 s (google-workspace/client.ts).
  silentTimeoutSeconds: SUITE_ANSWER_TIMEOUT_MS / 1000,
  sinkOperation: { operation_type: 'workspace_file', operation: 'append_rows', range: 'People' },
  async live() {
    const fake = await startWorkspaceFake();
    const sa = accountFor(fake.url);
    fake.oauth.trust(sa.email, sa.publicKey);
    const folder = fake.addFolder('conformance');
    const book = fake.addSpreadsheet('Conformance', { People: [['id', 'name']] }, folder.id);
    const at = { host: '127.0.0.1', port: Number(new URL(fake.url).port), allowPrivate: true };
    const ctx = googleContext(at, fake.url);
    const config = configOf('google_workspace', { spreadsheet_id: book.id, drive_folder_id: folder.id });
    return {
      good: { conn: { config, credentials: { service_account_json: sa.json } }, ctx },
      badCredentials: {
        conn: {
          config,
          // Signed by a key the fake does not trust: the same account name, another key.
          credentials: { service_account_json: accountFor(fake.url, 'stranger').json },
        },
        ctx,
      },
      roundTrip: { name: 'Conformance/People', fields: ['id', 'name'], throughSink: true },
      close: async () => fake.close(),
    };
  },
};
