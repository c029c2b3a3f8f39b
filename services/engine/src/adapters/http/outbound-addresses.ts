import { BlockList, isIP } from 'node:net';

/**
 * Classifies resolved IP addresses for the outbound guard: cloud metadata endpoints (always
 * refused) and non-public ranges (refused with WEFT_OUTBOUND_BLOCK_PRIVATE). IPv6 forms that
 * carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are judged by that address too.
 */

// Instance-credential endpoints: AWS/GCP/Azure/Oracle IMDS, AWS ECS/EKS credentials, Alibaba, AWS IMDS over IPv6.
const metadataAddresses = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '169.254.170.23',
  '100.100.100.200',
  'fd00:ec2:0:0:0:0:0:254',
  'fd00:ec2:0:0:0:0:0:23',
]);

const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible range
  ['64:ff9b::', 96], // NAT64: reaches any IPv4 address through the translator
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32], // Teredo
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or undefined when it is not one. */
export function ipv6Groups(address: string): number[] | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) !== 6) return undefined;
  let text = bare.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const ipv4 = (high: number, low: number): string => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/** The IPv4 address an IPv6 address stands for or tunnels to, if any. */
export function embeddedIpv4(groups: number[]): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const zeroHead = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroHead && (g5 === 0xffff || g5 === 0)) return ipv4(g6, g7); // mapped, compatible
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4(g6, g7); // NAT64
  if (g0 === 0x2002) return ipv4(g1, g2); // 6to4
  if (g0 === 0x2001 && g1 === 0) return ipv4(~g6 & 0xffff, ~g7 & 0xffff); // Teredo client
  return undefined;
}

const canonicalIpv6 = (groups: number[]): string => groups.map((group) => group.toString(16)).join(':');

/** True for cloud metadata endpoints, in any IPv4 or IPv6 spelling: refused whatever the settings. */
export function isMetadataAddress(address: string): boolean {
  const groups = ipv6Groups(address);
  if (!groups) return metadataAddresses.has(address);
  const inner = embeddedIpv4(groups);
  return metadataAddresses.has(canonicalIpv6(groups)) || (inner !== undefined && metadataAddresses.has(inner));
}

/** Checks an address against a list, an IPv4-mapped address as the IPv4 host it is. */
function listed(list: BlockList, address: string): boolean {
  const groups = ipv6Groups(address);
  if (!groups) return list.check(address, 'ipv4');
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  return mapped ? list.check(embeddedIpv4(groups) as string, 'ipv4') : list.check(canonicalIpv6(groups), 'ipv6');
}

/** True for loopback, private, link-local, reserved and tunnelling addresses (WEFT_OUTBOUND_BLOCK_PRIVATE). */
export const isNonPublicAddress = (address: string): boolean => listed(nonPublic, address);

const thisMachine = new BlockList();
thisMachine.addSubnet('0.0.0.0', 8, 'ipv4');
thisMachine.addSubnet('127.0.0.0', 8, 'ipv4');
thisMachine.addAddress('::', 'ipv6');
thisMachine.addAddress('::1', 'ipv6');

/** Loopback and unspecified addresses, which always mean this machine. */
export const isLoopbackOrUnspecified = (address: string): boolean => listed(thisMachine, address);

/** One spelling per address, so that equal addresses compare equal (IPv4-mapped as IPv4). */
export function canonicalAddress(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  return mapped ? (embeddedIpv4(groups) as string) : canonicalIpv6(groups);
}

/** The address and, for IPv6 forms that carry one (NAT64, 6to4, compatible...), the IPv4 host it reaches. */
export function addressForms(address: string): string[] {
  const groups = ipv6Groups(address);
  const inner = groups ? embeddedIpv4(groups) : undefined;
  return inner === undefined ? [canonicalAddress(address)] : [canonicalAddress(address), inner];
}
