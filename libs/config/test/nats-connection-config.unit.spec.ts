import { ConfigError, loadConfig } from '../src/index.js';

describe('NATS credentials and TLS from WEFT_NATS_*', () => {
  it('reads a user and password, and TLS files, for the bus connection', () => {
    const config = loadConfig({
      WEFT_NATS_USER: 'engine',
      WEFT_NATS_PASSWORD: 'secret',
      WEFT_NATS_TLS_CA: '/tls/ca.crt',
      WEFT_NATS_TLS_CERT: '/tls/engine.crt',
      WEFT_NATS_TLS_KEY: '/tls/engine.key',
    });
    expect(config.nats).toEqual({
      user: 'engine',
      password: 'secret',
      credsFile: undefined,
      tls: { caFile: '/tls/ca.crt', certFile: '/tls/engine.crt', keyFile: '/tls/engine.key' },
    });
  });

  it('connects without credentials or TLS when none are set (an open server, as in tests)', () => {
    expect(loadConfig({}).nats).toEqual({ user: undefined, password: undefined, credsFile: undefined, tls: undefined });
  });

  it('WEFT_NATS_TLS=true requires TLS verified against the system CAs', () => {
    expect(loadConfig({ WEFT_NATS_TLS: 'true' }).nats.tls).toEqual({
      caFile: undefined,
      certFile: undefined,
      keyFile: undefined,
    });
  });

  it.each([
    [{ WEFT_NATS_USER: 'engine' }, /WEFT_NATS_PASSWORD/],
    [{ WEFT_NATS_PASSWORD: 'secret' }, /WEFT_NATS_USER/],
    [{ WEFT_NATS_USER: 'engine', WEFT_NATS_PASSWORD: 's', WEFT_NATS_CREDS: '/x.creds' }, /not both/],
    [{ WEFT_NATS_TLS_CERT: '/tls/engine.crt' }, /WEFT_NATS_TLS_KEY/],
  ])('refuses an incomplete or ambiguous setting %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
