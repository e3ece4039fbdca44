/**
 * Where a webhook may be sent (contract §7): only to public unicast
 * addresses, unless WEBHOOK_ALLOW_PRIVATE. The check runs on the address
 * actually connected to: `safeLookup` is the `lookup` of the sockets the
 * sender opens, so a name that resolves to 127.0.0.1 (or is re-pointed there
 * after the endpoint was created) is refused at connection time.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A destination refused by the rules; its message names the address, never the secret. */
export class UnsafeDestinationError extends Error {
  readonly code = 'unsafe_destination';
}

/**
 * Whether `address` is public unicast. Everything else is refused:
 * loopback, private (RFC 1918, unique local), link-local, carrier-grade NAT,
 * unspecified, multicast, reserved, and IPv6 forms that embed an IPv4
 * address (mapped ones are judged by the address they carry).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

export function checkAddress(address: string, allowPrivate: boolean): void {
  if (!allowPrivate && !isPublicAddress(address)) {
    throw new UnsafeDestinationError(
      `Refused to connect to ${address}: a loopback, private, link-local or reserved address (set WEBHOOK_ALLOW_PRIVATE=true to allow it).`,
    );
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` for `net.connect` that refuses the whole name when any of its
 * addresses is not allowed (a name must not reach a private address by
 * being resolved twice and answering differently). Handles both shapes of
 * call: `all: true` (Node's happy-eyeballs connect) and a single address.
 */
export function safeLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      try {
        for (const a of addresses) checkAddress(a.address, allowPrivate);
      } catch (e) {
        return callback(e as NodeJS.ErrnoException, []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** A URL host given as an address literal never reaches `lookup`: it is checked here. */
export function checkLiteralHost(hostname: string, allowPrivate: boolean): void {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(bare)) checkAddress(bare, allowPrivate);
}
