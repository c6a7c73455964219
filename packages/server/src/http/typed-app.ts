import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

/** The Fastify instance route files register on: zod schemas type each handler's request and reply. */
export type TypedApp = FastifyInstance<any, any, any, any, ZodTypeProvider>;
