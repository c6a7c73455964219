import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError } from './lock';

// The embedded store's data directory lock (lock.ts): one holder at a time, a lock of a dead
// process taken over, and a released lock leaves neither its file nor its exit listener behind.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-lock-'));
const file = path.join(dir, 'sluice.lock');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('data directory lock', () => {
  it('is held once, and released leaves no file and no exit listener', () => {
    const listeners = process.listenerCount('exit');
    for (let i = 0; i < 20; i++) {
      const lock = acquireDataDirLock(dir);
      expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
      expect(() => acquireDataDirLock(dir)).toThrow(DataDirLockedError);
      lock.release();
      lock.release();
      expect(fs.existsSync(file)).toBe(false);
    }
    expect(process.listenerCount('exit')).toBe(listeners);
  });

  it('takes over the lock of a process that is gone', () => {
    // A pid above the kernel's largest (pid_max is at most 2^22) belongs to no process.
    fs.writeFileSync(file, String(2 ** 22 + 1));
    const lock = acquireDataDirLock(dir);
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
    lock.release();
  });
});
