import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { AppError } from './errors';
import { loneSurrogateIssue, loneSurrogatePath } from './unicode';

/**
 * JSON only; an empty body is "no body" so action routes (`:revoke`) accept a bare POST. Shared by
 * the API host and the app host's /api mount, so both parse requests the same way.
 */
export function installJsonBody(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      done(
        new AppError('VALIDATION_FAILED', 'the request body is not valid JSON', {
          validationErrors: [
            { path: '(body)', code: 'invalid_json', message: 'the request body is not valid JSON' },
          ],
        }),
        undefined,
      );
      return;
    }
    // A lone UTF-16 surrogate cannot be stored (PostgreSQL text and jsonb refuse it).
    const bad = loneSurrogatePath(value);
    if (bad !== null) {
      done(
        new AppError('VALIDATION_FAILED', 'the request is not valid', {
          validationErrors: [loneSurrogateIssue(bad)],
        }),
        undefined,
      );
      return;
    }
    done(null, value);
  });
}
