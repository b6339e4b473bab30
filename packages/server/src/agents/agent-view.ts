import { randomBytes } from 'node:crypto';
import { type Agent, type MachineLimits, SIZE_SPECS, subdomainStem } from '@svc/contract';
import type { AgentRow } from '../db/schema.js';

/**
 * The API's Agent row: the stored row plus specs, the driver's own limits (`machineLimitsOf`),
 * subdomain URL and ISO timestamps.
 */
export function toApiAgent(
  row: AgentRow,
  origin: { readonly scheme: string; readonly domain: string },
  limits?: MachineLimits,
): Agent {
  return {
    id: row.id,
    name: row.name,
    size: row.size,
    region: row.region,
    billingType: row.billingType,
    status: row.state,
    diskOperation: row.diskOperation,
    provider: row.provider,
    accountId: row.accountId,
    cohort: row.cohort,
    subdomain: row.subdomain,
    // Every driver's Agents are served by the service's edge, which routes by this host.
    url: `${origin.scheme}://${row.subdomain}.${origin.domain}/`,
    specs: SIZE_SPECS[row.size][row.region],
    ...(limits && { limits }),
    statusReason: row.statusReason,
    idleStopMinutes: row.idleStopMinutes,
    backups: { enabled: row.backupsEnabled, keep: row.backupsKeep, hourUtc: row.backupsHour },
    // Said only while it is (being) stopped: once started again the reason is history.
    stoppedReason: row.state === 'stopping' || row.state === 'stopped' ? row.stoppedReason : null,
    adoptedFrom: row.adoptedFrom,
    credentialsToSet: row.credentialsToSet,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A new Agent's subdomain: the name's stem, `-`, and 6 random base36 characters. */
export function newSubdomain(name: string): string {
  const suffix = Array.from(randomBytes(6), (byte) => (byte % 36).toString(36)).join('');
  return `${subdomainStem(name)}-${suffix}`;
}
