import type { FastifyRequest } from 'fastify';
import type { HttpCall, HttpReply, HttpRoute } from '@weft/contracts';
import type { Actor } from '@weft/bus';

/** What the gateway needs to know of a route to guard it; services' routes add the bus subject. */
export type RouteDeclaration = Omit<HttpRoute, 'spec'>;

/** A route the gateway serves: its declaration and what answers it (a service over the bus, or the gateway). */
export interface RouteBinding {
  route: RouteDeclaration;
  handle(call: HttpCall, actor: Actor, request: FastifyRequest): Promise<HttpReply>;
}
