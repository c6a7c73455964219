import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { FTPError } from 'basic-ftp';
import { ConnectorError } from '../types';
import type { FtpSession } from './client';

// Transfers over one session: whole small files (bounded), streams for pipelines, and uploads
// that land under a temporary name and are renamed into place, so nobody ever reads half a
// file and a failed run leaves the old file as it was.

export class TooLarge extends Error {}

/** The size of a file, or null when there is no such file. */
export async function sizeOf(s: FtpSession, full: string): Promise<number | null> {
  try {
    return await s.client.size(full);
  } catch (err) {
    if (err instanceof FTPError && err.code >= 500) return null;
    throw err;
  }
}

/** A whole file, refused beyond `maxBytes`. */
export async function downloadAll(s: FtpSession, full: string, maxBytes: number): Promise<Buffer> {
  const size = await sizeOf(s, full);
  if (size === null) {
    throw new ConnectorError('QUERY_FAILED', `${path.posix.basename(full)} does not exist on the FTP server`);
  }
  if (size > maxBytes) throw tooLarge(maxBytes);
  const parts: Buffer[] = [];
  let total = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      total += chunk.length;
      if (total > maxBytes) return cb(new TooLarge());
      parts.push(chunk);
      cb();
    },
  });
  try {
    await s.client.downloadTo(sink, full);
  } catch (err) {
    if (total > maxBytes) throw tooLarge(maxBytes);
    throw err;
  }
  return Buffer.concat(parts);
}

const tooLarge = (max: number) =>
  new ConnectorError('RESPONSE_TOO_LARGE', `the file is larger than ${Math.floor(max / 1024 / 1024)} MiB`);

/**
 * The first bytes of a file (schema sampling). Past `limit` the data connection is dropped: the
 * server answers 426 on the control connection, which stays usable for the next file.
 */
export async function downloadHead(s: FtpSession, full: string, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (total < limit) parts.push(chunk);
      total += chunk.length;
      if (total >= limit) s.client.ftp.dataSocket?.destroy();
      cb();
    },
  });
  try {
    await s.client.downloadTo(sink, full);
  } catch (err) {
    if (total < limit) throw err;
  }
  return Buffer.concat(parts).subarray(0, limit);
}

/** A file as a stream; `done` tells whether the server confirmed the whole transfer. */
export function downloadStream(s: FtpSession, full: string): { chunks: PassThrough; done: Promise<void> } {
  const chunks = new PassThrough({ highWaterMark: 256 * 1024 });
  const done = s.client.downloadTo(chunks, full).then(() => undefined);
  done.catch((err) => chunks.destroy(err));
  return { chunks, done };
}

export type Written = { bytes: number; digest: string };

/**
 * Uploads `chunks` to `full`: to a hidden temporary name next to it, then renamed over it.
 * With `overwrite: false` an existing file is refused before anything is sent.
 */
export async function uploadAtomic(
  s: FtpSession,
  full: string,
  chunks: AsyncIterable<Uint8Array>,
  overwrite: boolean,
): Promise<Written> {
  if (!overwrite && (await sizeOf(s, full)) !== null) {
    throw new ConnectorError('QUERY_FAILED', `${path.posix.basename(full)} exists and overwrite is false`);
  }
  const dir = path.posix.dirname(full);
  await ensureDir(s, dir);
  const temp = path.posix.join(dir, `.${path.posix.basename(full)}.sluice-${randomBytes(6).toString('hex')}`);
  const hash = createHash('sha256');
  let bytes = 0;
  let sourceError: unknown = null;
  async function* counted() {
    try {
      for await (const c of chunks) {
        const b = Buffer.from(c);
        bytes += b.length;
        hash.update(b);
        yield b;
      }
    } catch (err) {
      sourceError = err;
      throw err;
    }
  }
  try {
    await s.client.uploadFrom(Readable.from(counted()), temp);
  } catch (err) {
    await removeQuietly(s, temp);
    throw sourceError ?? err;
  }
  try {
    await s.client.rename(temp, full);
  } catch (err) {
    // Servers that do not rename over a file: remove it first (overwrite was allowed).
    if (!(err instanceof FTPError) || !overwrite) throw err;
    await s.client.remove(full, true);
    await s.client.rename(temp, full);
  }
  return { bytes, digest: hash.digest('hex') };
}

/** Best effort: a broken transfer closes the session, so the clean-up may need a new one. */
async function removeQuietly(s: FtpSession, file: string): Promise<void> {
  if (!s.client.closed) {
    await s.client.remove(file, true).catch(() => {});
    return;
  }
  const again = await s.reopen().catch(() => null);
  if (!again) return;
  try {
    await again.client.remove(file, true);
  } catch {
    // Nothing more to do: the file has a name nobody reads.
  } finally {
    again.close();
  }
}

async function ensureDir(s: FtpSession, dir: string): Promise<void> {
  if (dir === s.home || dir === '/') return;
  try {
    await s.client.send(`MKD ${dir}`);
  } catch (err) {
    if (!(err instanceof FTPError)) throw err;
    // 550 "exists" is fine; a missing parent is created first.
    const parent = path.posix.dirname(dir);
    if (parent !== dir && parent.startsWith(s.home) && parent !== s.home) {
      await ensureDir(s, parent);
      await s.client.send(`MKD ${dir}`).catch(() => {});
    }
  }
}
