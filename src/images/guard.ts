import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

// What the image check may reach, a tenant naming the host: https only, public addresses only, unless the operator
// lists the host (IMAGE_CHECK_INSECURE_REGISTRIES). Addresses are checked where the connection is made (the socket's
// own lookup), so a name that resolves elsewhere on the second look, or a redirect, can't reach past the rule.

/** A registry the rules refuse to reach: the reason is ours, never the registry's. */
export class AddressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefused';
  }
}

/** Only addresses of this range of ipaddr.js's are public; every other (loopback, private, link-local, metadata …) is refused. */
const PUBLIC = 'unicast';

/** Why `address` may not be reached, or undefined when it may. */
export function addressProblem(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const range = ipaddr.process(address).range();
  if (range === PUBLIC) return undefined;
  const said: Record<string, string> = {
    loopback: 'a loopback address',
    private: 'a private address',
    uniqueLocal: 'a private address',
    linkLocal: 'a link-local address (such as a cloud metadata service)',
    carrierGradeNat: 'a shared (carrier-grade NAT) address',
    unspecified: 'an unspecified address',
  };
  return said[range] ?? `a reserved address (${range})`;
}

/** Resolves a host name to all its addresses, as `dns.lookup` with `all: true` does. */
export type Lookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A socket lookup that resolves `hostname` and refuses it when any of its addresses is not public: a name that resolves
 * to a public and a private address is refused whole, so that no retry on another address can reach the private one.
 */
export function guardedLookup(resolve: Lookup = dnsLookup as unknown as Lookup): LookupFunction {
  return (hostname, options, callback): void => {
    resolve(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
      if (error) return callback(error, '', 0);
      for (const { address } of addresses) {
        const problem = addressProblem(address);
        if (problem) {
          const refused = new AddressRefused(
            `The registry host ${hostname} resolves to ${problem} (${address}), which image checks may not reach.`,
          );
          return callback(refused as NodeJS.ErrnoException, '', 0);
        }
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

export interface ReachOptions {
  /** host[:port] entries (lowercase) reached over plain http, whatever their address. */
  insecure: ReadonlySet<string>;
  connectTimeoutMs: number;
  /** Resolves host names (tests resolve a name to an address of their choosing); the system's resolver by default. */
  resolve?: Lookup;
}

/** How one URL may be reached: refused (the reason), or over which dispatcher. */
export type Reach = { refused: string } | { dispatcher: Agent };

/** The two ways out: the guarded one for any host, the open one for the hosts an operator listed. */
export class Reacher {
  private readonly insecure: ReadonlySet<string>;
  private readonly guarded: Agent;
  private readonly listed: Agent;

  constructor(options: ReachOptions) {
    this.insecure = options.insecure;
    const common = { connections: 4, keepAliveTimeout: 4000, headersTimeout: 0, bodyTimeout: 0 };
    this.guarded = new Agent({ ...common, connect: { timeout: options.connectTimeoutMs, lookup: guardedLookup(options.resolve) } });
    this.listed = new Agent({ ...common, connect: { timeout: options.connectTimeoutMs } });
  }

  /** Is `host` (host[:port] as in a URL) one an operator listed? */
  isListed(host: string): boolean {
    return this.insecure.has(host.toLowerCase());
  }

  /** The scheme a registry host is reached with: http for a listed host, https for any other. */
  scheme(host: string): 'http:' | 'https:' {
    return this.isListed(host) ? 'http:' : 'https:';
  }

  /** Whether, and how, `url` may be reached (a redirect's target is asked again). */
  reach(url: URL): Reach {
    if (this.isListed(url.host)) return { dispatcher: this.listed };
    if (url.protocol !== 'https:') {
      return {
        refused: `The registry sent the check to ${url.protocol}//${url.host}: only https is allowed, except for hosts in IMAGE_CHECK_INSECURE_REGISTRIES.`,
      };
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(hostname)) {
      const problem = addressProblem(hostname);
      if (problem)
        return {
          refused: `The registry host ${url.host} is ${problem}, which image checks may not reach; an operator may list it in IMAGE_CHECK_INSECURE_REGISTRIES.`,
        };
    }
    return { dispatcher: this.guarded };
  }

  async close(): Promise<void> {
    await Promise.all([this.guarded.close(), this.listed.close()]);
  }
}

/** At most `limit` holders at once per key (a registry host), in this process; the others wait their turn. */
export class PerKeyLimit {
  private readonly limit: number;
  private readonly held = new Map<string, { count: number; waiting: (() => void)[] }>();

  constructor(limit: number) {
    this.limit = limit;
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let entry = this.held.get(key);
    if (!entry) {
      entry = { count: 0, waiting: [] };
      this.held.set(key, entry);
    }
    if (entry.count >= this.limit) await new Promise<void>((resolve) => entry?.waiting.push(resolve));
    else entry.count++;
    try {
      return await work();
    } finally {
      const next = entry.waiting.shift();
      if (next) next();
      else if (--entry.count === 0) this.held.delete(key);
    }
  }
}
