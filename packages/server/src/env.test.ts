import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './env';

describe('configuration', () => {
  it('takes a database pool of two or more connections, ten by default', () => {
    expect(parseConfig({}).dbPoolSize).toBe(10);
    expect(parseConfig({ SLUICE_DB_POOL_SIZE: '2' }).dbPoolSize).toBe(2);
  });

  it('refuses a pool of one, which the startup migration would deadlock on', () => {
    expect(() => parseConfig({ SLUICE_DB_POOL_SIZE: '1' })).toThrow(ConfigError);
    expect(() => parseConfig({ SLUICE_DB_POOL_SIZE: '1' })).toThrow(
      'SLUICE_DB_POOL_SIZE: must be at least 2 (the startup migration uses two connections)',
    );
    expect(() => parseConfig({ SLUICE_DB_POOL_SIZE: 'ten' })).toThrow(/SLUICE_DB_POOL_SIZE/);
  });
});
