import { setups, startGatewayWithCatalog, type GatewayWithCatalog } from './fixtures/gateway-with-catalog.js';

/**
 * Free-form JSON (node configs) travels from the gateway to the catalog and into events. A body
 * that carries `__proto__` or `constructor.prototype` is refused at the gateway (400), as
 * Fastify's default parser does, and nothing is created.
 */
describe.each(setups)('prototype keys in JSON bodies ($bus bus, $db)', (setup) => {
  let weft: GatewayWithCatalog;
  let org: { id: string; key: string };

  const processBody = (config: string): string =>
    `{"name":"Poisoned","nodes":[{"id":"n","type":"scriptNode","position":{"x":0,"y":0},"config":${config}}]}`;

  beforeAll(async () => {
    weft = await startGatewayWithCatalog(setup);
    org = await weft.organization('Acme');
  });

  afterAll(() => weft.stop());

  test.each([
    ['__proto__', '{"label":"s","__proto__":{"isAdmin":true}}', '/nodes/0/config/__proto__'],
    ['escaped __proto__', '{"label":"s","\\u005f_proto__":{"isAdmin":true}}', '/nodes/0/config/__proto__'],
    [
      'constructor.prototype',
      '{"label":"s","constructor":{"prototype":{"x":1}}}',
      '/nodes/0/config/constructor/prototype',
    ],
  ])('%s answers 400 and creates nothing', async (_name, config, path) => {
    const before = await weft.lastPosition();
    const answer = await weft.http(
      'POST',
      `/api/v1/processes/by-org/${org.id}`,
      org.key,
      undefined,
      processBody(config),
    );
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toContain('application/problem+json');
    expect(answer.body.errors).toEqual([expect.objectContaining({ path })]);
    expect(await weft.store.readAll({ fromPosition: before })).toEqual([]);
  });

  test('a harmless "constructor" key is kept', async () => {
    const answer = await weft.http(
      'POST',
      `/api/v1/processes/by-org/${org.id}`,
      org.key,
      undefined,
      processBody('{"label":"s","constructor":{"name":"x"}}'),
    );
    expect(answer.status).toBe(201);
    expect(answer.body.nodes[0].config.constructor).toEqual({ name: 'x' });
  });
});
