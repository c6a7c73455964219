import { DrizzleQueryError } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loggableError, toAppError } from './error-handler';

describe('loggableError', () => {
  it('keeps the query, codes and frames of a failed query but none of its values', () => {
    const canary = 'canary-5d1c0b7e';
    const cause = new pg.DatabaseError(
      'duplicate key value violates unique constraint "users_email_uq"',
      0,
      'error',
    );
    cause.code = '23505';
    cause.detail = `Key (email)=(${canary}@example.com) already exists.`;
    cause.constraint = 'users_email_uq';
    const err = new DrizzleQueryError(
      'insert into "users" ("email", "password_hash") values ($1, $2)',
      [`${canary}@example.com`, `$argon2id$${canary}`],
      cause,
    );
    expect(JSON.stringify(err.stack) + JSON.stringify(err.params)).toContain(canary);

    const logged = loggableError(err)!;
    expect(JSON.stringify(logged)).not.toContain(canary);
    expect(logged).toMatchObject({
      type: 'DrizzleQueryError',
      message: 'Failed query: insert into "users" ("email", "password_hash") values ($1, $2)',
      query: 'insert into "users" ("email", "password_hash") values ($1, $2)',
      cause: { code: '23505', constraint: 'users_email_uq' },
    });
    expect(String(logged.stack)).toMatch(/^\s+at /);
    expect(toAppError(err).code).toBe('CONFLICT');
  });

  it('passes non-errors through as nothing', () => {
    expect(loggableError(undefined)).toBeUndefined();
    expect(loggableError('boom')).toBeUndefined();
  });
});
