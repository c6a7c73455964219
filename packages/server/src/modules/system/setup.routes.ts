import type { Deps } from '../../context';
import { access } from '../../http/access';
import { AppError, conflict } from '../../http/errors';
import { errorResponses } from '../../http/openapi';
import { publicRateLimit } from '../../http/rate-limit';
import type { TypedApp } from '../../http/typed-app';
import { AlreadyBootstrappedError, bootstrap } from './bootstrap';
import * as s from './setup.schemas';
import { consumeSetupCode, hasOrganization, setupCodeMatches } from './setup-code';

export function setupRoutes(app: TypedApp, deps: Deps) {
  app.post('/setup', {
    // No token exists yet: public, but limited per address and useless without the code.
    config: { ...access.public(), ...publicRateLimit(deps.config) },
    schema: {
      tags: ['System'],
      summary: 'First-run setup: trade the one-time setup code for the first organization and its tokens',
      description:
        'Works only while the store has no organization and only with the code `sluice serve` printed and ' +
        'wrote to the data directory; the code is deleted once used. 409 CONFLICT once an organization ' +
        'exists, 403 FORBIDDEN for a wrong or missing code. `sluice setup` calls it.',
      operationId: 'setup',
      security: [],
      body: s.setupBody,
      response: { 201: s.setupResult, ...errorResponses },
    },
    handler: async (req, reply) => {
      const done = () => conflict('this server is already set up; sign in or ask an owner for a token');
      if (await hasOrganization(deps.db)) throw done();
      if (!setupCodeMatches(deps.config, req.body.setup_code)) {
        throw new AppError('FORBIDDEN', 'the setup code does not match the one sluice serve printed');
      }
      try {
        const result = await bootstrap(deps, {
          orgSlug: req.body.organization_slug,
          email: req.body.email,
          name: req.body.name,
          password: req.body.password,
        });
        consumeSetupCode(deps.config);
        // The body holds tokens: Cache-Control no-store comes from its schema (http/no-store.ts).
        return reply.status(201).send(result);
      } catch (err) {
        if (err instanceof AlreadyBootstrappedError) throw done();
        throw err;
      }
    },
  });
}
