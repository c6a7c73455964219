import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FileMetadata } from '@sluice/engine';
import { ConnectorError } from '../types';
import type { Workspace } from './client';

// Drive files: listing a folder, downloading (`alt=media`, streamed) and uploading (multipart
// upload for a new file, media upload to replace one). Google-native documents have no bytes
// to download; spreadsheets are read through their ranges instead.

export type DriveFile = {
  id: string;
  name: string;
  mime_type: string;
  size_bytes: number | null;
  modified_time: string | null;
};

const FILE_FIELDS = 'id,name,mimeType,size,modifiedTime';
const MAX_LIST = 1000;

export async function listFiles(w: Workspace, folderId: string): Promise<DriveFile[]> {
  const out: DriveFile[] = [];
  let pageToken: string | undefined;
  do {
    const res = await w.drive.files.list({
      // folderId is checked to be [A-Za-z0-9_-]+, so it cannot close the quoted literal.
      q: `'${folderId}' in parents and trashed = false`,
      pageSize: 100,
      pageToken,
      fields: `nextPageToken, files(${FILE_FIELDS})`,
      supportsAllDrives: true,
      includeItemsFromAllDrives: true,
    });
    for (const f of res.data.files ?? []) {
      out.push({
        id: f.id ?? '',
        name: f.name ?? '',
        mime_type: f.mimeType ?? 'application/octet-stream',
        size_bytes: f.size ? Number(f.size) : null,
        modified_time: f.modifiedTime ?? null,
      });
    }
    pageToken = res.data.nextPageToken ?? undefined;
  } while (pageToken && out.length < MAX_LIST);
  return out;
}

export type Download = { meta: DriveFile; chunks: AsyncIterable<Uint8Array> };

/** The file's metadata and its bytes as a stream, at most `maxBytes`. */
export async function downloadFile(w: Workspace, fileId: string, maxBytes: number): Promise<Download> {
  const metaRes = await w.drive.files.get({ fileId, fields: FILE_FIELDS, supportsAllDrives: true });
  const m = metaRes.data;
  const meta: DriveFile = {
    id: m.id ?? fileId,
    name: m.name ?? fileId,
    mime_type: m.mimeType ?? 'application/octet-stream',
    size_bytes: m.size ? Number(m.size) : null,
    modified_time: m.modifiedTime ?? null,
  };
  if (meta.mime_type.startsWith('application/vnd.google-apps.')) {
    throw new ConnectorError(
      'UNSUPPORTED_OPERATION',
      `${meta.name} is a Google-native document (${meta.mime_type}); read spreadsheets with read_range`,
    );
  }
  if (meta.size_bytes !== null && meta.size_bytes > maxBytes)
    throw new ConnectorError('RESPONSE_TOO_LARGE', `file ${meta.name} is larger than ${maxBytes} bytes`);
  const res = await w.drive.files.get(
    { fileId, alt: 'media', supportsAllDrives: true },
    { responseType: 'stream' },
  );
  const body = res.data as unknown as Readable;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let seen = 0;
    try {
      for await (const c of body) {
        seen += (c as Buffer).length;
        if (seen > maxBytes)
          throw new ConnectorError(
            'RESPONSE_TOO_LARGE',
            `file ${meta.name} is larger than ${maxBytes} bytes`,
          );
        yield c as Buffer;
      }
    } finally {
      body.destroy();
    }
  }
  return { meta, chunks: chunks() };
}

/** Counts and hashes bytes as they pass (file payload metadata without keeping bytes). */
export class Digest {
  private hash = createHash('sha256');
  size = 0;
  update(c: Uint8Array) {
    this.hash.update(c);
    this.size += c.length;
  }
  metadata(mimeType: string, filename?: string): FileMetadata {
    return {
      mime_type: mimeType,
      size_bytes: this.size,
      digest_algorithm: 'sha256',
      digest: this.hash.digest('hex'),
      ...(filename ? { filename } : {}),
    };
  }
}

/** Uploads `chunks` as a new file in `folderId`, or as the new content of `fileId`. */
export async function uploadFile(
  w: Workspace,
  o: { fileId?: string; name?: string; folderId?: string; mimeType: string },
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<{ file: DriveFile; digest: FileMetadata; created: boolean }> {
  const digest = new Digest();
  const body = Readable.from(
    (async function* () {
      for await (const c of chunks) {
        digest.update(c);
        yield Buffer.from(c);
      }
    })(),
  );
  const media = { mimeType: o.mimeType, body };
  // googleapis-common applies a client's rootUrl to request URLs but not to upload (media)
  // URLs, so uploads name it per call; otherwise they would go to Google's default host.
  const perCall = { rootUrl: w.driveRootUrl };
  const res = o.fileId
    ? await w.drive.files.update(
        { fileId: o.fileId, media, fields: FILE_FIELDS, supportsAllDrives: true },
        perCall,
      )
    : await w.drive.files.create(
        {
          requestBody: { name: o.name, parents: o.folderId ? [o.folderId] : undefined, mimeType: o.mimeType },
          media,
          fields: FILE_FIELDS,
          supportsAllDrives: true,
        },
        perCall,
      );
  const f = res.data;
  const file: DriveFile = {
    id: f.id ?? o.fileId ?? '',
    name: f.name ?? o.name ?? '',
    mime_type: f.mimeType ?? o.mimeType,
    size_bytes: f.size ? Number(f.size) : digest.size,
    modified_time: f.modifiedTime ?? null,
  };
  return { file, digest: digest.metadata(file.mime_type, file.name), created: !o.fileId };
}
