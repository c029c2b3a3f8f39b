import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * SSRF guard for outbound HTTP (WEFT_OUTBOUND_BLOCK_PRIVATE=true): refuses loopback, private,
 * link-local and other non-public targets, checked on the resolved addresses of every hop.
 */
export class OutboundBlockedError extends Error {
  override name = 'OutboundBlockedError';
}

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

export function isBlockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1] as string, 'ipv4');
  return blocked.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** Throws when `url`'s host resolves to any blocked address. */
export async function assertPublicTarget(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true });
  const bad = addresses.find((entry) => isBlockedAddress(entry.address));
  if (bad) throw new OutboundBlockedError(`outbound request to ${url.host} (${bad.address}) is blocked`);
}

const MAX_REDIRECTS = 5;

/**
 * fetch that, when `guard` is on, checks the target and each redirect hop before connecting.
 * Without the guard it is plain fetch.
 */
export async function guardedFetch(url: URL, init: RequestInit, guard: boolean): Promise<Response> {
  if (!guard) return fetch(url, init);
  let target = url;
  let request = init;
  for (let hop = 0; ; hop++) {
    await assertPublicTarget(target);
    const response = await fetch(target, { ...request, redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) return response;
    if (hop >= MAX_REDIRECTS) throw new OutboundBlockedError(`more than ${MAX_REDIRECTS} redirects`);
    await response.body?.cancel();
    target = new URL(location, target);
    // 303 (and 301/302 after POST, as browsers do) continue as GET without a body.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && request.method !== 'GET')) {
      request = { ...request, method: 'GET', body: undefined };
    }
  }
}
