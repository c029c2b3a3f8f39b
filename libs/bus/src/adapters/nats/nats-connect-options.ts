import { readFile } from 'node:fs/promises';
import { credsAuthenticator, type NodeConnectionOptions } from '@nats-io/transport-node';

/** How a service proves who it is to NATS and secures the link (WEFT_NATS_* in libs/config). */
export interface NatsSecurity {
  user?: string;
  password?: string;
  /** A .creds file (JWT and nkey seed). */
  credsFile?: string;
  /** Require TLS, verified against `caFile` (else the system CAs), with a client certificate when given. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

/** The client options for `security`; nothing for an empty one (an open server, as in tests). */
export async function natsSecurityOptions(security: NatsSecurity = {}): Promise<Partial<NodeConnectionOptions>> {
  const options: Partial<NodeConnectionOptions> = {};
  if (security.user) Object.assign(options, { user: security.user, pass: security.password });
  if (security.credsFile) options.authenticator = credsAuthenticator(await readFile(security.credsFile));
  if (security.tls) {
    const { caFile, certFile, keyFile } = security.tls;
    options.tls = { ...(caFile && { caFile }), ...(certFile && { certFile }), ...(keyFile && { keyFile }) };
  }
  return options;
}
