import type { LocationJson, ServerTypeEntry } from './catalog.js';
import { SYSTEM_IMAGES } from './catalog.js';
import type { Labels } from './label-selector.js';

export type ServerStatus =
  | 'initializing'
  | 'starting'
  | 'running'
  | 'stopping'
  | 'off'
  | 'deleting'
  | 'rebuilding';

export interface ServerRecord {
  readonly id: number;
  readonly name: string;
  status: ServerStatus;
  readonly created: string;
  /** Changed in place by `change_type`. */
  serverType: ServerTypeEntry;
  /** GB of disk: the type's at creation, grown by `change_type` only with `upgrade_disk`. */
  diskGb?: number;
  readonly location: LocationJson;
  /** The image its disk was last written from (at creation, or by `rebuild`). */
  imageId: number;
  /**
   * The disk's content, as far as tests model it: files by path. An image made from the server
   * copies it, a server made or rebuilt from that image gets the copy; tests write and read it.
   */
  files: Map<string, string>;
  labels: Labels;
  readonly userData: string | null;
  readonly ipv4: { readonly id: number; readonly ip: string } | null;
  /** The server's /64, written as Hetzner does (`2001:db8:0:1::/64`). */
  readonly ipv6: { readonly id: number; readonly ip: string } | null;
  /** The running action that locks the server (423 for any other), or null. */
  lockedBy: number | null;
}

/** A rule as Hetzner answers it: both address lists and `port` always present. */
export interface FirewallRuleJson {
  readonly description: string | null;
  readonly direction: 'in' | 'out';
  readonly protocol: 'tcp' | 'udp' | 'icmp' | 'esp' | 'gre';
  readonly port: string | null;
  readonly source_ips: string[];
  readonly destination_ips: string[];
}

export type AppliedTo =
  | { readonly type: 'server'; readonly server: { readonly id: number } }
  | { readonly type: 'label_selector'; readonly label_selector: { readonly selector: string } };

export interface FirewallRecord {
  readonly id: number;
  readonly name: string;
  labels: Labels;
  readonly created: string;
  rules: FirewallRuleJson[];
  appliedTo: AppliedTo[];
}

export interface ImageRecord {
  readonly id: number;
  readonly type: 'system' | 'snapshot' | 'backup';
  status: 'available' | 'creating' | 'unavailable';
  readonly name: string | null;
  readonly description: string;
  imageSize: number | null;
  readonly diskSize: number;
  readonly created: string;
  readonly createdFrom: { readonly id: number; readonly name: string } | null;
  readonly osFlavor: string;
  readonly osVersion: string | null;
  labels: Labels;
  /** A snapshot's copy of its server's files (`ServerRecord.files`); none for system images. */
  readonly files?: ReadonlyMap<string, string>;
}

export interface ActionRecord {
  readonly id: number;
  readonly command: string;
  status: 'running' | 'success' | 'error';
  readonly startedMs: number;
  finishedMs: number | null;
  readonly resources: { readonly id: number; readonly type: string }[];
  error: { readonly code: string; readonly message: string } | null;
}

/** What tests may read to assert on (Maps by id); the stand-in alone writes it. */
export interface StandInState {
  readonly servers: ReadonlyMap<number, ServerRecord>;
  readonly firewalls: ReadonlyMap<number, FirewallRecord>;
  readonly images: ReadonlyMap<number, ImageRecord>;
  readonly actions: ReadonlyMap<number, ActionRecord>;
}

/** Hetzner writes timestamps as `2016-01-30T23:55:00+00:00`. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/** The stand-in's mutable project: records and id/address counters. */
export class Store implements StandInState {
  readonly servers = new Map<number, ServerRecord>();
  readonly firewalls = new Map<number, FirewallRecord>();
  readonly images = new Map<number, ImageRecord>();
  readonly actions = new Map<number, ActionRecord>();
  private lastId = 1000;
  private addressCount = 0;

  constructor() {
    for (const image of SYSTEM_IMAGES) {
      this.images.set(image.id, {
        id: image.id,
        type: 'system',
        status: 'available',
        name: image.name,
        description: image.name.replace('-', ' '),
        imageSize: null,
        diskSize: 5,
        created: isoTime(Date.UTC(2024, 0, 1)),
        createdFrom: null,
        osFlavor: image.flavor,
        osVersion: image.version,
        labels: {},
      });
    }
  }

  /** Ids are unique across kinds, as they look to a client (never reused). */
  nextId(): number {
    this.lastId += 1;
    return this.lastId;
  }

  /** Addresses the next servers get instead (a test's own listener on loopback). */
  readonly pinnedIpv4: string[] = [];

  /** Documentation ranges: IPv4 from TEST-NET-3, IPv6 /64s from 2001:db8::/32. */
  allocateAddresses() {
    this.addressCount += 1;
    const n = this.addressCount;
    if (n > 254) throw new Error('the stand-in has no more addresses in 203.0.113.0/24');
    return {
      ipv4: { id: this.nextId(), ip: this.pinnedIpv4.shift() ?? `203.0.113.${n}` },
      ipv6: { id: this.nextId(), ip: `2001:db8:0:${n.toString(16)}::/64` },
    };
  }
}
