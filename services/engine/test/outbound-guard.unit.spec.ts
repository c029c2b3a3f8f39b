import { isNonPublicAddress } from '../src/adapters/http/outbound-addresses.js';
import { OutboundGuard } from '../src/adapters/http/outbound-guard.js';

describe('outbound guard (WEFT_OUTBOUND_BLOCK_PRIVATE)', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.10', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['8.8.8.8', false],
    ['2001:4860:4860::8888', false],
    ['::ffff:8.8.8.8', false],
  ])('%s blocked: %s', (address, expected) => {
    expect(isNonPublicAddress(address)).toBe(expected);
  });

  test('a URL whose host is or resolves to loopback is refused before connecting', async () => {
    const guard = new OutboundGuard({ blockPrivate: true });
    await expect(guard.resolveTarget('127.0.0.1', 9)).rejects.toThrow(/blocked/);
    await expect(guard.resolveTarget('[::1]', 9)).rejects.toThrow(/blocked/);
    await expect(guard.resolveTarget('localhost', 9)).rejects.toThrow(/blocked/);
  });

  test('without WEFT_OUTBOUND_BLOCK_PRIVATE private addresses stay reachable', async () => {
    const guard = new OutboundGuard({ blockPrivate: false });
    await expect(guard.resolveTarget('127.0.0.1', 9)).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(guard.resolveTarget('10.1.2.3', 9)).resolves.toEqual([{ address: '10.1.2.3', family: 4 }]);
  });
});
