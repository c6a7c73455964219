import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { ConnectorError } from '../types';
import type { S3Session } from './client';

// Object-level calls shared by query execution, schema import and pipelines.

export type ObjectInfo = {
  key: string;
  size_bytes: number;
  last_modified: string | null;
  etag: string | null;
};

/** The full key of a statement key: the configured prefix joined in front. */
export function fullKey(s: S3Session, key: string): string {
  const k = key.replace(/^\/+/, '');
  if (k === '' || k.endsWith('/'))
    throw new ConnectorError('INVALID_STATEMENT', 'the key must name an object, not a folder');
  return `${s.prefix}${k}`;
}

/** A key as the user wrote it: relative to the configured prefix. */
export const relativeKey = (s: S3Session, key: string) =>
  key.startsWith(s.prefix) ? key.slice(s.prefix.length) : key;

/** Every object below the configured prefix plus `prefix`, a listing page (up to 1,000) at a time. */
export async function* objectPages(
  s: S3Session,
  prefix: string | undefined,
  signal?: AbortSignal,
  pageSize = 1000,
): AsyncGenerator<ObjectInfo[]> {
  let token: string | undefined;
  const full = `${s.prefix}${(prefix ?? '').replace(/^\/+/, '')}`;
  for (;;) {
    let page: any;
    try {
      page = await s.client.send(
        new s.sdk.ListObjectsV2Command({
          Bucket: s.bucket,
          Prefix: full || undefined,
          MaxKeys: pageSize,
          ContinuationToken: token,
        }),
        { abortSignal: signal as any },
      );
    } catch (err) {
      throw s.error(err, 'listing');
    }
    const objects: ObjectInfo[] = [];
    for (const o of page.Contents ?? []) {
      // Zero-byte "folder" markers are not objects anyone means to read.
      if (!o.Key || o.Key.endsWith('/')) continue;
      objects.push({
        key: o.Key,
        size_bytes: Number(o.Size ?? 0),
        last_modified: o.LastModified ? new Date(o.LastModified).toISOString() : null,
        etag: typeof o.ETag === 'string' ? o.ETag.replace(/"/g, '') : null,
      });
    }
    if (objects.length > 0) yield objects;
    if (!page.IsTruncated || !page.NextContinuationToken) return;
    token = page.NextContinuationToken;
  }
}

/** Lists up to `max` objects; `more` when there are others. */
export async function listObjects(
  s: S3Session,
  prefix: string | undefined,
  max: number,
  signal?: AbortSignal,
): Promise<{ objects: ObjectInfo[]; more: boolean }> {
  const objects: ObjectInfo[] = [];
  for await (const page of objectPages(s, prefix, signal, Math.min(1000, max + 1))) {
    for (const o of page) {
      if (objects.length === max) return { objects, more: true };
      objects.push(o);
    }
  }
  return { objects, more: false };
}

export type OpenObject = {
  key: string;
  contentType: string | undefined;
  size: number | null;
  body: AsyncIterable<Uint8Array>;
  /** Drops the download when the body is not read to its end. */
  close(): void;
};

/** Starts a download; `range` asks for the first bytes only (`bytes=0-65535`). */
export async function getObject(
  s: S3Session,
  key: string,
  signal?: AbortSignal,
  range?: string,
): Promise<OpenObject> {
  let res: any;
  try {
    res = await s.client.send(new s.sdk.GetObjectCommand({ Bucket: s.bucket, Key: key, Range: range }), {
      abortSignal: signal as any,
    });
  } catch (err) {
    throw s.error(err, 'read');
  }
  const body = res.Body as Readable;
  async function* chunks() {
    try {
      for await (const chunk of body) yield chunk as Uint8Array;
    } catch (err) {
      throw s.error(err, 'read');
    }
  }
  return {
    key,
    contentType: res.ContentType,
    size: typeof res.ContentLength === 'number' && !range ? res.ContentLength : null,
    body: chunks(),
    close: () => body.destroy(),
  };
}

/** True when the object exists (HEAD). */
export async function objectExists(s: S3Session, key: string, signal?: AbortSignal): Promise<boolean> {
  try {
    await s.client.send(new s.sdk.HeadObjectCommand({ Bucket: s.bucket, Key: key }), {
      abortSignal: signal as any,
    });
    return true;
  } catch (err: any) {
    if (err?.name === 'NotFound' || err?.name === 'NoSuchKey' || err?.$metadata?.httpStatusCode === 404)
      return false;
    throw s.error(err, 'write');
  }
}

export type Uploaded = { bytes: number; digest: string; parts: number };

/** The multipart upload helper loaded on the first upload (a worker's warm start loads it ahead). */
export const uploadModule = () => import('@aws-sdk/lib-storage');

/**
 * Streams `chunks` into one object: a single PUT when it fits one part, a multipart upload
 * otherwise (lib-storage, two parts in flight). A failed multipart upload is aborted so no
 * parts are left behind; the object only appears once the upload completes.
 */
export async function putObject(
  s: S3Session,
  key: string,
  chunks: AsyncIterable<Uint8Array>,
  o: { contentType: string; partSizeBytes: number; signal?: AbortSignal },
): Promise<Uploaded> {
  const { Upload } = await uploadModule();
  const hash = createHash('sha256');
  let bytes = 0;
  let sourceError: unknown = null;
  async function* counted() {
    try {
      for await (const chunk of chunks) {
        const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        bytes += b.length;
        hash.update(b);
        yield b;
      }
    } catch (err) {
      // The upstream failed: that error, not the aborted upload, is the step's error.
      sourceError = err;
      throw err;
    }
  }
  let parts = 0;
  const upload = new Upload({
    client: s.client,
    params: { Bucket: s.bucket, Key: key, Body: Readable.from(counted()), ContentType: o.contentType },
    partSize: o.partSizeBytes,
    queueSize: 2,
    leavePartsOnError: false,
  });
  upload.on('httpUploadProgress', (p) => {
    if (typeof p.part === 'number') parts = Math.max(parts, p.part);
  });
  const abort = () => void upload.abort().catch(() => {});
  o.signal?.addEventListener('abort', abort, { once: true });
  try {
    await upload.done();
  } catch (err) {
    if (sourceError) throw sourceError;
    throw s.error(err, 'write');
  } finally {
    o.signal?.removeEventListener('abort', abort);
  }
  return { bytes, digest: hash.digest('hex'), parts };
}
