import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/**
 * One line per request, written when it is answered: the request fields (path, query names,
 * address, id), the status and the response time together. Fastify's default writes two (one
 * on arrival, one on completion), doubling the serialization and redaction work per request.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (this.isLogDisabled(request)) return;
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
