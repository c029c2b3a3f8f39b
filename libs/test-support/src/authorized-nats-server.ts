import { randomBytes } from 'node:crypto';
import { startNatsServer, type TestNatsServer } from './nats-server.js';

export interface AuthorizedNatsOptions {
  /** An authorization file (infra/nats/auth.conf) whose users read their passwords from variables. */
  authConf: string;
  /** Every user the file names. */
  users: readonly string[];
  /** The variable the file reads `user`'s password from. */
  passwordVariable(user: string): string;
  /** More server configuration, e.g. a `tls { ... }` block. */
  config?: string;
}

export interface AuthorizedNatsServer extends TestNatsServer {
  passwords: Record<string, string>;
  /** The WEFT_NATS_* variables a service running as `user` reads. */
  envFor(user: string): Record<string, string>;
}

/**
 * A nats-server of its own on a free loopback port, with JetStream and an authorization file (the
 * users and permissions docker-compose runs), a random password per user.
 */
export async function startAuthorizedNatsServer(options: AuthorizedNatsOptions): Promise<AuthorizedNatsServer> {
  const passwords = Object.fromEntries(
    // nats-server parses the variable as a config value: a letter first keeps it a string (infra/README.md).
    options.users.map((user) => [user, `p${randomBytes(12).toString('hex')}`]),
  );
  const server = await startNatsServer({
    include: [options.authConf],
    config: options.config,
    env: Object.fromEntries(options.users.map((user) => [options.passwordVariable(user), passwords[user] as string])),
  });
  return {
    ...server,
    passwords,
    envFor: (user) => ({ WEFT_NATS_URL: server.url, WEFT_NATS_USER: user, WEFT_NATS_PASSWORD: passwords[user] ?? '' }),
  };
}
