import type { drive_v3 } from '@googleapis/drive';
import type { sheets_v4 } from '@googleapis/sheets';
import { apiRoot, type GoogleClient, googleClient, googleError, parseServiceAccount } from '../google/auth';
import { type ConnectorContext, ConnectorError } from '../types';

// Sheets and Drive clients (Google's generated ones) on one JWT client whose transport is
// guarded (google/auth.ts): every request of both goes through it.

export type WorkspaceConfig = { spreadsheet_id?: string; drive_folder_id?: string };
export type WorkspaceConnection = {
  config: WorkspaceConfig;
  credentials: { service_account_json: string } | null;
};

const SHEETS_ROOT = 'https://sheets.googleapis.com';
const DRIVE_ROOT = 'https://www.googleapis.com';
const SCOPES = ['https://www.googleapis.com/auth/spreadsheets', 'https://www.googleapis.com/auth/drive'];
export const TIMEOUT_SECONDS = 60;

export type Workspace = {
  sheets: sheets_v4.Sheets;
  drive: drive_v3.Drive;
  google: GoogleClient;
  /** Drive's root with a trailing slash; uploads need it per call (see drive.ts). */
  driveRootUrl: string;
};

export async function openWorkspace(conn: WorkspaceConnection, ctx: ConnectorContext): Promise<Workspace> {
  if (!conn.credentials?.service_account_json)
    throw new ConnectorError('AUTHENTICATION_FAILED', 'the data source has no service_account_json');
  const sa = parseServiceAccount(conn.credentials.service_account_json);
  const sheetsRoot = apiRoot(ctx, SHEETS_ROOT);
  const driveRoot = apiRoot(ctx, DRIVE_ROOT);
  const google = await googleClient(sa, ctx, {
    scopes: SCOPES,
    roots: [sheetsRoot, driveRoot],
    timeoutMs: ctx.limits.answerTimeoutMs ?? TIMEOUT_SECONDS * 1000,
  });
  const [{ sheets }, { drive }] = await Promise.all([
    import('@googleapis/sheets'),
    import('@googleapis/drive'),
  ]);
  return {
    sheets: sheets({ version: 'v4', auth: google.jwt as any, rootUrl: `${sheetsRoot}/` }),
    drive: drive({ version: 'v3', auth: google.jwt as any, rootUrl: `${driveRoot}/` }),
    google,
    driveRootUrl: `${driveRoot}/`,
  };
}

/** Opens, runs `fn`, closes, and maps failures to sanitized ConnectorErrors. */
export async function withWorkspace<T>(
  conn: WorkspaceConnection,
  ctx: ConnectorContext,
  what: string,
  fn: (w: Workspace) => Promise<T>,
): Promise<T> {
  let w: Workspace | null = null;
  try {
    w = await openWorkspace(conn, ctx);
    return await fn(w);
  } catch (err) {
    throw googleError(err, what, true);
  } finally {
    w?.google.close();
  }
}

export function spreadsheetOf(id: string | undefined, conn: WorkspaceConnection): string {
  const s = id ?? conn.config.spreadsheet_id;
  if (!s)
    throw new ConnectorError('INVALID_STATEMENT', 'no spreadsheet_id in the statement or the data source');
  return s;
}

export function folderOf(id: string | undefined, conn: WorkspaceConnection): string {
  const f = id ?? conn.config.drive_folder_id;
  if (!f)
    throw new ConnectorError(
      'INVALID_STATEMENT',
      'no folder_id in the statement or drive_folder_id in the data source',
    );
  return f;
}
