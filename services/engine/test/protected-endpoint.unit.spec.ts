import type { ResolvedAddress } from '../src/adapters/http/protected-endpoint.js';
import { ProtectedEndpoint } from '../src/adapters/http/protected-endpoint.js';
import { OutboundGuard } from '../src/adapters/http/outbound-guard.js';

/** The service's own database as seen by the guard, with DNS injected (nothing is connected to). */
const dns: Record<string, string[]> = {
  'db.internal': ['10.0.0.5'],
  'alias.internal': ['10.0.0.9', '10.0.0.5'],
  'other.internal': ['10.0.0.6'],
  localhost: ['127.0.0.1', '::1'],
};
const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
  const answers = dns[hostname];
  if (!answers) throw new Error(`ENOTFOUND ${hostname}`);
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const guardFor = (databaseUrl: string) =>
  new OutboundGuard({
    blockPrivate: false,
    protectedEndpoints: [ProtectedEndpoint.ofDatabaseUrl(databaseUrl)],
    resolve,
  });

describe("the service's own database endpoint", () => {
  test('on another host: refused by name, by address and through any name resolving to it, on its port only', async () => {
    const guard = guardFor('postgres://weft:secret@db.internal:5432/weft');
    await expect(guard.resolveTarget('DB.internal', 5432)).rejects.toThrow(/own database/);
    await expect(guard.resolveTarget('10.0.0.5', 5432)).rejects.toThrow(/own database/);
    await expect(guard.resolveTarget('::ffff:10.0.0.5', 5432)).rejects.toThrow(/own database/);
    await expect(guard.resolveTarget('64:ff9b::a00:5', 5432)).rejects.toThrow(/own database/);
    await expect(guard.resolveTarget('alias.internal', 5432)).rejects.toThrow(/own database/);
    await expect(guard.resolveTarget('other.internal', 5432)).resolves.toHaveLength(1);
    await expect(guard.resolveTarget('10.0.0.5', 5433)).resolves.toHaveLength(1);
    // Loopback is another machine's database here, so it stays allowed.
    await expect(guard.resolveTarget('127.0.0.1', 5432)).resolves.toHaveLength(1);
  });

  test('on this machine: every loopback and unspecified address on its port is the same server', async () => {
    const guard = guardFor('postgres://weft@localhost/weft');
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '0.0.0.0',
      '::',
      '::ffff:127.0.0.1',
      '64:ff9b::7f00:1',
      'localhost',
    ]) {
      await expect(guard.resolveTarget(host, 5432)).rejects.toThrow(/own database/);
    }
    await expect(guard.resolveTarget('127.0.0.1', 3306)).resolves.toHaveLength(1);
  });

  test('a socket-path URL protects localhost:5432', async () => {
    const guard = guardFor('postgres://weft@%2Fvar%2Frun%2Fpostgresql/weft');
    await expect(guard.resolveTarget('127.0.0.1', 5432)).rejects.toThrow(/own database/);
  });

  test('when its own name does not resolve, its port is refused rather than guessed', async () => {
    const guard = guardFor('postgres://weft@db.unknown:5432/weft');
    await expect(guard.resolveTarget('other.internal', 5432)).rejects.toThrow(/own database/);
    await expect(guard.resolveTarget('other.internal', 443)).resolves.toHaveLength(1);
  });
});
