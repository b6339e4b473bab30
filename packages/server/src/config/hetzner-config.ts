import { Region, Size } from '@svc/contract';
import ipaddr from 'ipaddr.js';
import type { HetznerConfig } from './config.js';
import type { Env } from './env.js';

type Check = <T>(name: string, result: T | string) => T | undefined;

/** `key=value,key=value` into pairs; a problem names the entry, never a secret (none here). */
function pairs(raw: string): [string, string][] | string {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const result: [string, string][] = [];
  for (const entry of entries) {
    const [key, value, ...rest] = entry.split('=').map((part) => part.trim());
    if (!key || !value || rest.length > 0) return `"${entry}" is not key=value`;
    result.push([key, value]);
  }
  return result;
}

function locations(raw: string): Record<Region, string> | string {
  const parsed = pairs(raw);
  if (typeof parsed === 'string') return parsed;
  const table = Object.fromEntries(parsed);
  const unknown = Object.keys(table).filter((key) => !Region.safeParse(key).success);
  if (unknown.length > 0) return `unknown region ${unknown.join(', ')} (regions: us, eu)`;
  const missing = Region.options.filter((region) => !table[region]);
  if (missing.length > 0) return `give a location for ${missing.join(', ')}, e.g. us=hil,eu=hel1`;
  return table as Record<Region, string>;
}

function serverTypes(raw: string): HetznerConfig['serverTypes'] | string {
  const parsed = pairs(raw);
  if (typeof parsed === 'string') return parsed;
  for (const [cell] of parsed) {
    const [size, region] = cell.split('-');
    if (!Size.safeParse(size).success || !Region.safeParse(region).success) {
      return `"${cell}" is not size-region, e.g. small-eu`;
    }
  }
  return Object.fromEntries(parsed);
}

function sources(raw: string): string[] | string {
  const list = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (list.length === 0) return 'give at least one CIDR';
  const bad = list.filter((cidr) => !ipaddr.isValidCIDR(cidr));
  return bad.length > 0 ? `not CIDRs: ${bad.join(', ')}` : list;
}

/** `COMPUTE_DRIVER=hetzner`'s settings; problems go through `check` with the variable's name. */
export function hetznerConfig(env: Env, check: Check): HetznerConfig {
  return {
    driver: 'hetzner',
    endpoint: env.HCLOUD_ENDPOINT,
    locations: check('HCLOUD_LOCATIONS', locations(env.HCLOUD_LOCATIONS)) ?? {
      us: 'hil',
      eu: 'hel1',
    },
    serverTypes: check('HCLOUD_SERVER_TYPES', serverTypes(env.HCLOUD_SERVER_TYPES)) ?? {},
    agentImage: env.HCLOUD_AGENT_IMAGE,
    gatewaySources: check('HCLOUD_GATEWAY_SOURCES', sources(env.HCLOUD_GATEWAY_SOURCES)) ?? [],
  };
}
