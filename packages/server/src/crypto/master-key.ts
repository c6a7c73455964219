import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export class MasterKeyError extends Error {}

/** 32 bytes given as 64 hex characters or base64 (standard or url-safe). */
export function parseMasterKey(value: string): Buffer {
  const v = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (key.length !== 32) {
    throw new MasterKeyError('SLUICE_MASTER_KEY must be 32 bytes, as 64 hex characters or base64');
  }
  return key;
}

/**
 * The key-encryption key: SLUICE_MASTER_KEY when set, otherwise `<data dir>/master.key`,
 * generated with mode 600 on first start. Processes sharing one PostgreSQL server must share it.
 */
export function loadMasterKey(opts: { masterKey?: string; dataDir: string }): {
  key: Buffer;
  source: 'env' | 'file';
} {
  if (opts.masterKey) return { key: parseMasterKey(opts.masterKey), source: 'env' };
  const file = path.join(path.resolve(opts.dataDir), 'master.key');
  if (fs.existsSync(file)) {
    const mode = fs.statSync(file).mode & 0o777;
    if (mode & 0o077) fs.chmodSync(file, 0o600);
    return { key: parseMasterKey(fs.readFileSync(file, 'utf8')), source: 'file' };
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadMasterKey(opts);
    throw err;
  }
  return { key, source: 'file' };
}
