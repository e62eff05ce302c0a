/**
 * Member discovery for workers: asks a daemon for the live cluster members
 * (Admin.ListMembers) and turns the answer into the set of addresses a
 * worker keeps a Work stream to.
 *
 * Candidates are asked one at a time, first answer wins: the one that
 * answered last, then the seeds, then the members already known (so a
 * worker outlives the death of its seed). Without Redis a daemon lists only
 * itself, so discovery degrades to one stream to the seed.
 */
import type * as grpc from '@grpc/grpc-js';
import { TimelaneClient } from './client.js';
import type { MemberInfo } from './types.js';

export interface DiscoveryResult {
  /** Stream addresses, sorted and deduplicated. */
  addresses: string[];
  members: MemberInfo[];
  /** The candidate that answered. */
  via: string;
}

export interface DiscoveryOptions {
  seeds: string[];
  credentials?: grpc.ChannelCredentials;
  token?: string;
  /** Deadline of one ListMembers call. */
  callTimeoutMs: number;
}

const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]', '*']);

/** Splits "host:port" / "[v6]:port" / "dns:///host:port"-free addresses at the last colon. */
export function splitHostPort(address: string): { host: string; port: string } | null {
  const i = address.lastIndexOf(':');
  if (i < 0) return null;
  const host = address.slice(0, i);
  const port = address.slice(i + 1);
  if (!/^\d+$/.test(port)) return null;
  // A bare IPv6 address without brackets ("::1") has no port to split off.
  if (host.includes(':') && !(host.startsWith('[') && host.endsWith(']'))) return null;
  return { host, port };
}

/**
 * The addresses to stream to, from a ListMembers answer: one per distinct
 * address, sorted. A member advertising a wildcard host (0.0.0.0, ::) gets
 * the host of the daemon that answered — right when the cluster runs on one
 * host; otherwise the daemons need --advertise-address. Members without an
 * address are skipped.
 */
export function memberAddresses(members: readonly MemberInfo[], answeredBy: string): string[] {
  const seedHost = splitHostPort(answeredBy)?.host;
  const out = new Set<string>();
  for (const m of members) {
    const addr = m.grpcAddress.trim();
    if (!addr) continue;
    const hp = splitHostPort(addr);
    if (hp && WILDCARD_HOSTS.has(hp.host) && seedHost && !WILDCARD_HOSTS.has(seedHost)) out.add(`${seedHost}:${hp.port}`);
    else out.add(addr);
  }
  return [...out].sort();
}

/** Which streams to open and which to close to go from `current` to `wanted`. */
export function planStreams(current: Iterable<string>, wanted: readonly string[]): { open: string[]; close: string[] } {
  const have = new Set(current);
  const want = new Set(wanted);
  return {
    open: [...want].filter((a) => !have.has(a)),
    close: [...have].filter((a) => !want.has(a)),
  };
}

/** Candidates in the order they are asked: last answer, seeds, known members; no repeats. */
export function candidateOrder(preferred: string | undefined, seeds: readonly string[], known: readonly string[]): string[] {
  return [...new Set([...(preferred ? [preferred] : []), ...seeds, ...known])];
}

export class MemberDiscovery {
  private readonly clients = new Map<string, TimelaneClient>();
  private preferred: string | undefined;
  private closed = false;

  constructor(private readonly opts: DiscoveryOptions) {}

  /**
   * Asks the candidates in turn; resolves with the first non-empty answer.
   * Rejects with the last error when none answers.
   */
  async discover(known: readonly string[]): Promise<DiscoveryResult> {
    if (this.closed) throw new Error('timelane: discovery is closed');
    let lastError: unknown = new Error('timelane: no address to discover members from');
    const candidates = candidateOrder(this.preferred, this.opts.seeds, known);
    for (const address of candidates) {
      try {
        const members = await this.client(address).listMembers();
        const addresses = memberAddresses(members, address);
        if (addresses.length === 0) {
          lastError = new Error(`timelane: ${address} lists no members with an address`);
          continue;
        }
        this.preferred = address;
        this.prune([...this.opts.seeds, ...addresses]);
        return { addresses, members, via: address };
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  }

  close(): void {
    this.closed = true;
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private client(address: string): TimelaneClient {
    let c = this.clients.get(address);
    if (!c) {
      c = new TimelaneClient(address, { credentials: this.opts.credentials, token: this.opts.token, timeoutMs: this.opts.callTimeoutMs });
      this.clients.set(address, c);
    }
    return c;
  }

  /** Closes the channels of addresses that are neither seeds nor members any more. */
  private prune(keep: readonly string[]): void {
    const k = new Set(keep);
    for (const [address, c] of this.clients) {
      if (!k.has(address)) {
        c.close();
        this.clients.delete(address);
      }
    }
  }
}
