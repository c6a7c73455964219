import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { organizations } from '../../db/schema/index';
import type { Config } from '../../env';

// The one-time setup code: while no organization exists, `sluice serve` writes a random code
// into the data directory (mode 0600) and prints it; `POST /setup` trades it for the first
// organization and its tokens. The code lives only in that file, so only someone who can read
// the server's data directory (or its terminal) can set the server up, and it works across
// several API hosts that share the directory.

export const SETUP_CODE_FILE = 'setup-code';

export const setupCodePath = (config: Pick<Config, 'dataDir'>) => path.join(config.dataDir, SETUP_CODE_FILE);

export async function hasOrganization(db: Db): Promise<boolean> {
  const [{ n }] = (await db.select({ n: sql<number>`count(*)::int` }).from(organizations)) as { n: number }[];
  return n > 0;
}

/**
 * A fresh code when the store has no organization yet (replacing an older one), else null and
 * any leftover file removed. The file is created with mode 0600 before anything is written.
 */
export async function issueSetupCode(deps: { db: Db; config: Config }): Promise<string | null> {
  const file = setupCodePath(deps.config);
  fs.rmSync(file, { force: true });
  if (await hasOrganization(deps.db)) return null;
  fs.mkdirSync(deps.config.dataDir, { recursive: true });
  // Groups of five characters read aloud and typed more easily than one long string.
  const raw = randomBytes(20).toString('hex').toUpperCase().slice(0, 25);
  const code = raw.match(/.{5}/g)!.join('-');
  fs.writeFileSync(file, `${code}\n`, { mode: 0o600, flag: 'wx' });
  return code;
}

const digest = (s: string) => createHash('sha256').update(s.trim().toUpperCase()).digest();

/** True when `given` equals the code on file; compared by digest, in constant time. */
export function setupCodeMatches(config: Pick<Config, 'dataDir'>, given: string): boolean {
  let stored: string;
  try {
    stored = fs.readFileSync(setupCodePath(config), 'utf8');
  } catch {
    return false;
  }
  if (!stored.trim()) return false;
  return timingSafeEqual(digest(stored), digest(given));
}

/** Single use: the file goes away once the organization exists. */
export function consumeSetupCode(config: Pick<Config, 'dataDir'>) {
  fs.rmSync(setupCodePath(config), { force: true });
}
