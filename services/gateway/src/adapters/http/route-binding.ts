import type { FastifyRequest } from 'fastify';
import type { HttpCall, HttpReply, HttpRoute } from '@weft/contracts';
import type { Actor } from '@weft/bus';

/** A route the gateway serves: its declaration and what answers it (a service over the bus, or the gateway). */
export interface RouteBinding {
  route: Omit<HttpRoute, 'spec'>;
  handle(call: HttpCall, actor: Actor, request: FastifyRequest): Promise<HttpReply>;
}
