import { createHash } from 'node:crypto';

/** The `file` object a saved query answers for a whole file it read or wrote (its sha256 digest). */
export function fileMetadata(bytes: Buffer, mimeType: string, filename: string | undefined) {
  return {
    mime_type: mimeType,
    size_bytes: bytes.length,
    digest_algorithm: 'sha256' as const,
    digest: createHash('sha256').update(bytes).digest('hex'),
    filename,
  };
}
