import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { addressForms, canonicalAddress, isLoopbackOrUnspecified } from './outbound-addresses.js';

/**
 * An endpoint no tenant may reach, whatever the outbound settings: the service's own database
 * (WEFT_DATABASE_URL). Matched by name, then by resolved address and port; when it lives on this
 * machine, every loopback and interface address of this machine counts as the same host.
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family: family === 6 ? 6 : 4 }];
  const answers = await lookup(hostname, { all: true, order: 'verbatim' });
  return answers.map(({ address, family: answerFamily }) => ({ address, family: answerFamily === 6 ? 6 : 4 }));
};

const machineAddresses = (): Set<string> =>
  new Set(
    Object.values(networkInterfaces())
      .flatMap((entries) => entries ?? [])
      .map((entry) => canonicalAddress(entry.address)),
  );

const onThisMachine = (address: string, machine: Set<string>): boolean =>
  addressForms(address).some((form) => isLoopbackOrUnspecified(form) || machine.has(form));

export class ProtectedEndpoint {
  private constructor(
    readonly hostname: string,
    readonly port: number,
    readonly label: string,
  ) {}

  /** The PostgreSQL server a `postgres://` URL names (a socket path or no host means localhost). */
  static ofDatabaseUrl(databaseUrl: string): ProtectedEndpoint {
    const url = new URL(databaseUrl);
    const host = decodeURIComponent(url.hostname.replace(/^\[|\]$/g, ''));
    return new ProtectedEndpoint(
      host === '' || host.startsWith('/') ? 'localhost' : host.toLowerCase(),
      url.port ? Number(url.port) : 5432,
      "the service's own database",
    );
  }

  /** Whether `hostname:port` names this endpoint as written, before any resolution. */
  isNamed(hostname: string, port: number): boolean {
    return port === this.port && hostname.replace(/^\[|\]$/g, '').toLowerCase() === this.hostname;
  }

  /** Whether `addresses` on `port` reach this endpoint. */
  async covers(port: number, addresses: string[], resolve: Resolver): Promise<boolean> {
    if (port !== this.port) return false;
    let own: string[];
    try {
      const named = isIP(this.hostname) === 0 ? await resolve(this.hostname) : [{ address: this.hostname }];
      own = named.map((entry) => canonicalAddress(entry.address));
    } catch {
      return true; // cannot tell where our own database is: refuse its port rather than guess
    }
    const machine = machineAddresses();
    if (own.some((address) => onThisMachine(address, machine))) {
      return addresses.some((address) => onThisMachine(address, machine));
    }
    return addresses.some((address) => addressForms(address).some((form) => own.includes(form)));
  }
}
