import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError, ExitCode } from './exit';

// Profiles (`sluice login`, `sluice setup`): an API address, a default organization and a token,
// so a newcomer types neither every time. The settings file holds no secret; each token is a
// file of its own with mode 0600 in a directory with mode 0700.

export type Profile = { base_url: string; organization?: string };
type Settings = { current?: string; profiles: Record<string, Profile> };

const PROFILE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `SLUICE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/sluice`, else `~/.config/sluice`. */
export function configDir(): string {
  if (process.env.SLUICE_CONFIG_DIR) return process.env.SLUICE_CONFIG_DIR;
  const base = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'sluice');
}

const settingsFile = () => path.join(configDir(), 'config.json');
const tokenFile = (name: string) => path.join(configDir(), 'tokens', name);

function readSettings(): Settings {
  try {
    const value = JSON.parse(fs.readFileSync(settingsFile(), 'utf8')) as Settings;
    return { current: value.current, profiles: value.profiles ?? {} };
  } catch {
    return { profiles: {} };
  }
}

/** The profile in use: SLUICE_PROFILE, else the one the last login chose. */
export function activeProfileName(): string | undefined {
  return process.env.SLUICE_PROFILE || readSettings().current;
}

export function activeProfile(): (Profile & { name: string }) | undefined {
  const name = activeProfileName();
  const profile = name ? readSettings().profiles[name] : undefined;
  return name && profile ? { name, ...profile } : undefined;
}

export function profileToken(name: string): string | undefined {
  try {
    return fs.readFileSync(tokenFile(name), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Writes the profile and its token (0600) and makes it the current one. */
export function saveProfile(name: string, profile: Profile, token: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new CliError(ExitCode.failed, `--profile must match ${PROFILE_NAME.source}`);
  }
  const dir = configDir();
  fs.mkdirSync(path.join(dir, 'tokens'), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.join(dir, 'tokens'), 0o700);
  const file = tokenFile(name);
  // Replace rather than rewrite, so an older file with wider permissions does not survive.
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  const settings = readSettings();
  settings.profiles[name] = profile;
  settings.current = name;
  fs.writeFileSync(settingsFile(), `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  return file;
}

/** The default of `--org`: SLUICE_ORG, else the active profile's organization. */
export function defaultOrg(): string | undefined {
  return process.env.SLUICE_ORG || activeProfile()?.organization;
}
