import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import { requestSerializer } from './logging';

/**
 * One line per request, written when it is answered: the request fields (path, query names,
 * address, id), the status and the response time together. Fastify's default writes two (one
 * on arrival, one on completion), doubling the serialization and redaction work per request.
 *
 * A completed request's line holds whitelisted fields only (requestSerializer's, the status and
 * the time), so it goes through `lineLog`, a logger without redaction paths. A failed request's
 * line carries the error and keeps the request's own (redacting) logger.
 */
export class OneLinePerRequest extends LogController {
  readonly #lineLog: Logger;

  readonly #skip: ((request: FastifyRequest) => boolean) | undefined;

  /** `skip`: requests whose line another host writes (the API host's, for the app host's /api). */
  constructor(lineLog: Logger, skip?: (request: FastifyRequest) => boolean) {
    super();
    this.#lineLog = lineLog;
    this.#skip = skip;
  }

  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (this.isLogDisabled(request) || this.#skip?.(request)) return;
    if (error) {
      const fields = { req: request, res: reply, responseTime: reply.elapsedTime };
      reply.log.error({ ...fields, err: error }, 'request errored');
      return;
    }
    if (!this.#lineLog.isLevelEnabled('info')) return;
    this.#lineLog.info(
      {
        reqId: request.id,
        req: requestSerializer(request),
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
  }
}
