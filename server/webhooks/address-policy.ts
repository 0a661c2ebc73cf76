/**
 * Which addresses webhooks may connect to (contract 2.9). The appliance talks
 * to apps in the same shop, so loopback and private LAN addresses are allowed;
 * link-local and cloud metadata, multicast, broadcast and unspecified
 * addresses never are, including their IPv4-mapped and NAT64 forms. The
 * operator's allow list (non-empty: only these) and deny list narrow it.
 * Checked on every resolved address, right before connecting to it.
 */

/** An IP address as bytes (4 for IPv4, 16 for IPv6). */
export interface IpAddress {
  family: 4 | 6;
  bytes: number[];
}

/** A CIDR range. */
export interface Cidr {
  family: 4 | 6;
  bytes: number[];
  prefix: number;
}

/** Refused whatever the settings say. */
export const ALWAYS_REFUSED: readonly string[] = Object.freeze([
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '169.254.0.0/16', // link-local, cloud metadata (169.254.169.254)
  '224.0.0.0/4', // multicast
  '255.255.255.255/32', // broadcast
  '::/128', // unspecified
  'fd00:ec2::254/128', // AWS metadata over IPv6
  'fe80::/10', // link-local
  'ff00::/8', // multicast
]);

/** Why an address was refused, for the attempt record. */
export const DESTINATION_NOT_ALLOWED = 'destination-not-allowed';

function parseIpv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes: number[] = [];
  for (const part of parts) {
    // Decimal only, no leading zeros: "010" would be octal to some parsers.
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes.push(value);
  }
  return bytes;
}

function parseGroups(text: string, allowIpv4Tail: boolean): number[] | null {
  if (text === '') return [];
  const groups = text.split(':');
  const bytes: number[] = [];
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]!;
    if (allowIpv4Tail && i === groups.length - 1 && group.includes('.')) {
      const v4 = parseIpv4(group);
      if (!v4) return null;
      bytes.push(...v4);
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
      const value = Number.parseInt(group, 16);
      bytes.push(value >> 8, value & 0xff);
    }
  }
  return bytes;
}

function parseIpv6(text: string): number[] | null {
  const zone = text.indexOf('%');
  const bare = zone === -1 ? text : text.slice(0, zone);
  const halves = bare.split('::');
  if (halves.length > 2) return null;
  if (halves.length === 1) {
    const bytes = parseGroups(bare, true);
    return bytes && bytes.length === 16 ? bytes : null;
  }
  const head = parseGroups(halves[0]!, false);
  const tail = parseGroups(halves[1]!, true);
  if (!head || !tail || head.length + tail.length > 14) return null;
  return [...head, ...new Array<number>(16 - head.length - tail.length).fill(0), ...tail];
}

/** Parses a literal IPv4 (dotted decimal) or IPv6 address (brackets and a zone allowed); null if it is not one. */
export function parseIp(text: string): IpAddress | null {
  const trimmed = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (trimmed.includes(':')) {
    const bytes = parseIpv6(trimmed);
    return bytes ? { family: 6, bytes } : null;
  }
  const bytes = parseIpv4(trimmed);
  return bytes ? { family: 4, bytes } : null;
}

/** Parses `a.b.c.d/n`, `x::y/n` or a single address; throws on anything else. */
export function parseCidr(text: string): Cidr {
  const [address, prefixText, extra] = text.trim().split('/');
  const ip = parseIp(address ?? '');
  const max = ip?.family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!ip || extra !== undefined || !(prefix >= 0 && prefix <= max)) throw new Error(`"${text}" is not a CIDR range`);
  return { family: ip.family, bytes: ip.bytes, prefix };
}

/** Whether `ip` lies in `cidr` (families must match). */
export function inCidr(ip: IpAddress, cidr: Cidr): boolean {
  if (ip.family !== cidr.family) return false;
  for (let bit = 0; bit < cidr.prefix; bit += 8) {
    const bits = Math.min(8, cidr.prefix - bit);
    const mask = (0xff << (8 - bits)) & 0xff;
    if ((ip.bytes[bit / 8]! & mask) !== (cidr.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

const EMBEDDING: readonly Cidr[] = [
  parseCidr('::ffff:0:0/96'), // IPv4-mapped
  parseCidr('::ffff:0:0:0/96'), // IPv4-translated
  parseCidr('64:ff9b::/96'), // NAT64, well-known prefix
];

/** The IPv4 address inside an IPv4-mapped, -translated or NAT64 IPv6 address, else null. */
export function embeddedIpv4(ip: IpAddress): IpAddress | null {
  if (ip.family !== 6 || !EMBEDDING.some((range) => inCidr(ip, range))) return null;
  return { family: 4, bytes: ip.bytes.slice(12) };
}

/** The address policy built from the settings; the always-refused ranges apply first. */
export class AddressPolicy {
  private readonly refused = ALWAYS_REFUSED.map(parseCidr);
  private readonly allow: Cidr[];
  private readonly deny: Cidr[];

  /** Throws if a range in `allow` or `deny` does not parse (the appliance refuses to start). */
  constructor(options: { allow: readonly string[]; deny: readonly string[] }) {
    this.allow = options.allow.map(parseCidr);
    this.deny = options.deny.map(parseCidr);
  }

  /** Whether a webhook may connect to this literal address. */
  allows(address: string): boolean {
    const ip = parseIp(address);
    if (!ip) return false;
    const forms = [ip];
    const inner = embeddedIpv4(ip);
    if (inner) forms.push(inner);
    const matches = (ranges: Cidr[]) => forms.some((form) => ranges.some((range) => inCidr(form, range)));
    if (matches(this.refused) || matches(this.deny)) return false;
    return this.allow.length === 0 || matches(this.allow);
  }
}
