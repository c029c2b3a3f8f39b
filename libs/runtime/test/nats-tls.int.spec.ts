import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsBus } from '@weft/bus';
import { loadConfig } from '@weft/config';
import { startAuthorizedNats, type AuthorizedNats } from './support/authorized-nats-server.js';

/**
 * WEFT_NATS_TLS_* (infra/README.md, TLS) against a real nats-server with the `tls` block of
 * infra/nats/nats.conf: the server's certificate is verified against the given CA, and with
 * `verify: true` a service must show a client certificate signed by it.
 */
const openssl = (dir: string, ...args: string[]): void => {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
};

/** A CA, and `names` certificates it signed (each valid for 127.0.0.1 and localhost), as files in `dir`. */
async function certificates(dir: string, ca: string, names: string[]): Promise<void> {
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, 'req', '-x509', ...key, '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-days', '1', '-subj', `/CN=${ca}`);
  await writeFile(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  for (const name of names) {
    openssl(dir, 'req', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      'san.ext',
    );
  }
}

describe('NATS over TLS from WEFT_NATS_TLS_*', () => {
  let dir: string;
  let nats: AuthorizedNats;
  const buses: NatsBus[] = [];
  const tlsEnv = (client?: string): Record<string, string> => ({
    WEFT_NATS_TLS_CA: join(dir, 'ca.crt'),
    ...(client && { WEFT_NATS_TLS_CERT: join(dir, `${client}.crt`), WEFT_NATS_TLS_KEY: join(dir, `${client}.key`) }),
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-nats-tls-'));
    await certificates(dir, 'ca', ['server', 'engine']);
    await certificates(dir, 'other-ca', ['impostor']);
    // A handshake timeout far above nats-server's default (2 s): with the whole suite running on
    // two cores, a client once took longer, the server dropped it, and the dial timed out.
    nats = await startAuthorizedNats(
      `tls {\n  cert_file: "${join(dir, 'server.crt')}"\n  key_file: "${join(dir, 'server.key')}"\n` +
        `  ca_file: "${join(dir, 'ca.crt')}"\n  verify: true\n  timeout: 15\n}`,
    );
  });

  afterAll(async () => {
    await Promise.all(buses.map((bus) => bus.close()));
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('connects with the CA and the client certificate the server verifies, and works as its user', async () => {
    const bus = await nats.connectAs('engine', undefined, loadConfig(tlsEnv('engine')).nats);
    buses.push(bus);
    expect(await bus.isReady()).toBe(true);
    expect(bus.connection.info?.tls_required).toBe(true);
  });

  it('refuses a server whose certificate another CA signed', async () => {
    const env = { ...tlsEnv('engine'), WEFT_NATS_TLS_CA: join(dir, 'other-ca.crt') };
    await expect(nats.connectAs('engine', undefined, loadConfig(env).nats)).rejects.toThrow();
  });

  it('refuses a server without TLS once TLS is asked for', async () => {
    const plain = await startAuthorizedNats();
    try {
      await expect(plain.connectAs('engine', undefined, loadConfig(tlsEnv('engine')).nats)).rejects.toThrow(/tls/i);
    } finally {
      await plain.stop();
    }
  });
});
