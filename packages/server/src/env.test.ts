import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './env';

describe('configuration', () => {
  it('takes a database pool of two or more connections, ten by default', () => {
    expect(parseConfig({}).dbPoolSize).toBe(10);
    expect(parseConfig({ SLUICE_DB_POOL_SIZE: '2' }).dbPoolSize).toBe(2);
  });

  it("turns a worker's warm start off only when asked, and refuses another value", () => {
    expect(parseConfig({}).workerWarmStart).toBe(true);
    expect(parseConfig({ SLUICE_WORKER_WARM_START: 'off' }).workerWarmStart).toBe(false);
    expect(() => parseConfig({ SLUICE_WORKER_WARM_START: 'no' })).toThrow(/SLUICE_WORKER_WARM_START/);
  });

  it('refuses a pool of one, which the startup migration would deadlock on', () => {
    expect(() => parseConfig({ SLUICE_DB_POOL_SIZE: '1' })).toThrow(ConfigError);
    expect(() => parseConfig({ SLUICE_DB_POOL_SIZE: '1' })).toThrow(
      'SLUICE_DB_POOL_SIZE: must be at least 2 (the startup migration uses two connections)',
    );
    expect(() => parseConfig({ SLUICE_DB_POOL_SIZE: 'ten' })).toThrow(/SLUICE_DB_POOL_SIZE/);
  });

  it('caps app-host event streams at 8 per session and 16 per user, re-checked every 5 s by default', () => {
    expect(parseConfig({}).streams).toEqual({ perSession: 8, perUser: 16, recheckMs: 5000 });
    expect(
      parseConfig({
        SLUICE_STREAMS_PER_SESSION: '2',
        SLUICE_STREAMS_PER_USER: '3',
        SLUICE_STREAM_RECHECK_SECONDS: '0.25',
      }).streams,
    ).toEqual({ perSession: 2, perUser: 3, recheckMs: 250 });
    expect(() => parseConfig({ SLUICE_STREAM_RECHECK_SECONDS: '0' })).toThrow(
      /SLUICE_STREAM_RECHECK_SECONDS/,
    );
    expect(() => parseConfig({ SLUICE_STREAMS_PER_SESSION: '0' })).toThrow(/SLUICE_STREAMS_PER_SESSION/);
  });

  it('behind a transaction pooler polls the queue every 0.5 s unless LISTEN has a direct URL', () => {
    const url = 'postgres://u@pooler:6432/sluice';
    expect(parseConfig({}).dbPooler).toEqual({ mode: 'none', directUrl: undefined });
    expect(parseConfig({ DATABASE_URL: url }).queuePollSeconds).toBe(2);
    const pooled = parseConfig({ DATABASE_URL: url, SLUICE_DB_POOLER: 'transaction' });
    expect(pooled.dbPooler).toEqual({ mode: 'transaction', directUrl: undefined });
    expect(pooled.queuePollSeconds).toBe(0.5);
    const direct = parseConfig({
      DATABASE_URL: url,
      SLUICE_DB_POOLER: 'transaction',
      DATABASE_DIRECT_URL: 'postgres://u@db:5432/sluice',
    });
    expect(direct.queuePollSeconds).toBe(2);
    expect(
      parseConfig({ DATABASE_URL: url, SLUICE_DB_POOLER: 'transaction', SLUICE_QUEUE_POLL_SECONDS: '1' })
        .queuePollSeconds,
    ).toBe(1);
  });

  it('refuses an unknown pooler mode, and a pooler without DATABASE_URL', () => {
    expect(() => parseConfig({ SLUICE_DB_POOLER: 'session' })).toThrow(/SLUICE_DB_POOLER/);
    expect(() => parseConfig({ SLUICE_DB_POOLER: 'transaction' })).toThrow(
      'SLUICE_DB_POOLER: transaction needs DATABASE_URL',
    );
  });

  it('reads lists from DATABASE_READ_URL within SLUICE_READ_MAX_LAG_MS, only beside DATABASE_URL', () => {
    const url = 'postgres://u@db:5432/sluice';
    const read = 'postgres://u@standby:5432/sluice';
    expect(parseConfig({ DATABASE_URL: url }).reads).toBeNull();
    expect(parseConfig({ DATABASE_URL: url, DATABASE_READ_URL: read }).reads).toEqual({
      url: read,
      maxLagMs: 1000,
    });
    expect(
      parseConfig({ DATABASE_URL: url, DATABASE_READ_URL: read, SLUICE_READ_MAX_LAG_MS: '250' }).reads,
    ).toEqual({ url: read, maxLagMs: 250 });
    expect(() => parseConfig({ DATABASE_READ_URL: read })).toThrow(
      'DATABASE_READ_URL: a read replica needs DATABASE_URL',
    );
    expect(() => parseConfig({ DATABASE_URL: url, DATABASE_READ_URL: 'standby' })).toThrow(
      /DATABASE_READ_URL/,
    );
    expect(() => parseConfig({ DATABASE_URL: url, SLUICE_READ_MAX_LAG_MS: '50' })).toThrow(
      /SLUICE_READ_MAX_LAG_MS/,
    );
  });
});
