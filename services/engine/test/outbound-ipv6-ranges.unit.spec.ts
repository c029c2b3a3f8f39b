import { isMetadataAddress, isNonPublicAddress } from '../src/adapters/http/outbound-addresses.js';
import { OutboundGuard } from '../src/adapters/http/outbound-guard.js';

describe('outbound guard: IPv6 ranges that reach private or tunnelled IPv4 hosts', () => {
  test.each([
    ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
    ['64:ff9b::10.0.0.1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2002:0808:0808::1', '6to4 of a public address (tunnel relay)'],
    ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
    ['::127.0.0.1', 'IPv4-compatible, dotted'],
    ['::a00:1', 'IPv4-compatible 10.0.0.1'],
    ['fec0::1', 'deprecated site-local'],
    ['fec0:1234::abcd', 'deprecated site-local'],
    ['::ffff:7f00:1', 'IPv4-mapped 127.0.0.1, hex spelling'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped 169.254.169.254, hex spelling'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['fe80::1%eth0', 'link-local with a zone'],
  ])('%s is refused with WEFT_OUTBOUND_BLOCK_PRIVATE (%s)', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  test.each(['2001:4860:4860::8888', '2606:4700:4700::1111', '::ffff:1.1.1.1'])('%s stays public', (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });

  test.each([
    '169.254.169.254',
    'fd00:ec2::254',
    'FD00:EC2:0:0:0:0:0:254',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    '2002:a9fe:a9fe::1',
    '::a9fe:a9fe',
    '169.254.170.2',
  ])('%s is a cloud metadata address', (address) => {
    expect(isMetadataAddress(address)).toBe(true);
  });

  test.each(['169.254.169.253', '10.0.0.1', 'fd00:ec2::253', '2001:4860:4860::8888'])(
    '%s is not a metadata address',
    (address) => {
      expect(isMetadataAddress(address)).toBe(false);
    },
  );

  test('metadata addresses are refused even when private targets are allowed, in any spelling and through DNS', async () => {
    const guard = new OutboundGuard({
      blockPrivate: false,
      resolve: async () => [{ address: '::ffff:169.254.169.254', family: 6 }],
    });
    await expect(guard.resolveTarget('169.254.169.254', 80)).rejects.toThrow(/cloud metadata/);
    await expect(guard.resolveTarget('[fd00:ec2::254]', 80)).rejects.toThrow(/cloud metadata/);
    await expect(guard.resolveTarget('metadata.example', 80)).rejects.toThrow(/cloud metadata/);
  });

  test('NAT64 and 6to4 answers for a name are refused with WEFT_OUTBOUND_BLOCK_PRIVATE', async () => {
    for (const address of ['64:ff9b::7f00:1', '2002:7f00:1::1', '::7f00:1', 'fec0::1']) {
      const guard = new OutboundGuard({ blockPrivate: true, resolve: async () => [{ address, family: 6 }] });
      await expect(guard.resolveTarget('tunnel.example', 443)).rejects.toThrow(/not a public address/);
    }
  });
});
