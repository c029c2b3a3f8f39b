import { resolve } from 'node:path';
import {
  NATS_SERVICE_USERS,
  NATS_SUBSCRIBER_USER,
  NatsBus,
  natsInboxPrefix,
  natsPasswordVariable,
  type NatsSecurity,
  type NatsUser,
} from '@weft/bus';
import { createLogger } from '@weft/observability';
import { startAuthorizedNatsServer } from '@weft/test-support';

/**
 * A nats-server of the test's own on a free loopback port, with JetStream and the committed
 * infra/nats/auth.conf (the users and permissions docker-compose runs), a random password per user.
 */
export interface AuthorizedNats {
  url: string;
  passwords: Record<NatsUser, string>;
  /** The WEFT_NATS_* variables a service running as `user` reads. */
  envFor(user: NatsUser): Record<string, string>;
  connectAs(user: NatsUser, password?: string, security?: NatsSecurity): Promise<NatsBus>;
  stop(): Promise<void>;
}

export const AUTH_CONF = resolve(__dirname, '../../../../infra/nats/auth.conf');

/** `extraConfig`: more server configuration, e.g. a `tls { ... }` block. */
export async function startAuthorizedNats(extraConfig = ''): Promise<AuthorizedNats> {
  const server = await startAuthorizedNatsServer({
    authConf: AUTH_CONF,
    users: [...NATS_SERVICE_USERS, NATS_SUBSCRIBER_USER],
    passwordVariable: (user) => natsPasswordVariable(user as NatsUser),
    config: extraConfig,
  });
  const passwords = server.passwords as Record<NatsUser, string>;
  return {
    url: server.url,
    passwords,
    envFor: (user) => server.envFor(user),
    connectAs: (user, password = passwords[user], security = {}) =>
      NatsBus.connect({
        servers: server.url,
        name: `test-${user}`,
        security: { ...security, user, password },
        inboxPrefix: natsInboxPrefix(user),
        // The refusals the tests provoke are logged as errors otherwise.
        logger: createLogger(`test-${user}`, { level: 'silent' }),
        // A dial on a loaded machine may take long; refusals still fail at once.
        connection: { maxReconnectAttempts: 0, timeout: 60_000 },
      }),
    stop: () => server.stop(),
  };
}
