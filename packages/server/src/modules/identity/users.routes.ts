import type { Deps } from '../../context';
import { access } from '../../http/access';
import { errorResponses } from '../../http/openapi';
import { publicRateLimit } from '../../http/rate-limit';
import type { TypedApp } from '../../http/typed-app';
import { meOf } from './me';
import * as s from './users.schemas';
import * as svc from './users.service';

export function usersRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Users'];

  app.post('/users', {
    config: { ...access.public(), ...publicRateLimit(deps.config) },
    schema: {
      tags,
      summary: 'Sign up: create an account and mail a verification token',
      description:
        'The answer never says whether the address is registered: for a registered one it is the same 201 with the would-be account, no account is made, and the address is mailed that someone tried to sign up with it. 409 only when a chosen `slug` is taken.',
      operationId: 'signUp',
      security: [],
      body: s.signUpBody,
      response: { 201: s.userSchema, ...errorResponses },
    },
    handler: async (req, reply) => reply.status(201).send(await svc.signUp(ctx(req), req.body)),
  });

  app.post('/users/email-verification', {
    config: { ...access.public(), ...publicRateLimit(deps.config) },
    schema: {
      tags,
      summary: 'Confirm an email address with the mailed token (single use)',
      operationId: 'verifyEmail',
      security: [],
      body: s.verifyEmailBody,
      response: { 200: s.userSchema, ...errorResponses },
    },
    handler: async (req) => svc.verifyEmail(ctx(req), req.body.token),
  });

  app.post('/users/me/email-verification::resend', {
    config: { ...access.user(), ...publicRateLimit(deps.config) },
    schema: {
      tags,
      summary: 'Mail a new verification token to the signed-in user (202; 409 when already verified)',
      operationId: 'resendEmailVerification',
      response: { 202: s.userSchema, ...errorResponses },
    },
    handler: async (req, reply) => reply.status(202).send(await svc.resendVerification(ctx(req), meOf(req))),
  });

  app.get('/users/me', {
    config: access.user(),
    schema: {
      tags,
      summary: 'The user of the personal access token',
      response: { 200: s.userSchema, ...errorResponses },
    },
    handler: async (req) => svc.getMe(ctx(req), meOf(req)),
  });

  app.patch('/users/me', {
    // Rate limited per address too: it checks a password.
    config: { ...access.user(), ...publicRateLimit(deps.config) },
    schema: {
      tags,
      summary:
        'Rename the account or set its password (current_password needed once the account has a password)',
      body: s.updateMeBody,
      response: { 200: s.userSchema, ...errorResponses },
    },
    handler: async (req) => svc.updateMe(ctx(req), meOf(req), req.body),
  });
}
