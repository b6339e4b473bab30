import { defaultUserOf, type MachineLimits, type PlainVm, SIZE_SPECS } from '@svc/contract';
import type { PlainVmRow } from '../db/schema.js';

/**
 * The API's Plain VM: the stored row with its tier, specs, the driver's own limits
 * (`machineLimitsOf`), access and SSH endpoint.
 */
export function toApiPlainVm(row: PlainVmRow, limits?: MachineLimits): PlainVm {
  return {
    id: row.id,
    accountId: row.accountId,
    name: row.name,
    tier: row.size,
    region: row.region,
    osImageKey: row.osImageKey,
    billingType: row.billingType,
    status: row.state,
    diskOperation: row.diskOperation,
    backups: { enabled: row.backupsEnabled, keep: row.backupsKeep, hourUtc: row.backupsHour },
    statusReason: row.statusReason,
    provider: row.provider,
    access: { passwordEnabled: row.passwordEnabled, vaultEntryIds: row.vaultEntryIds },
    defaultUser: defaultUserOf(row.osImageKey),
    ipv4: row.ipv4,
    ipv6: row.ipv6,
    ssh: row.sshHost && row.sshPort ? { host: row.sshHost, port: row.sshPort } : null,
    specs: SIZE_SPECS[row.size][row.region],
    ...(limits && { limits }),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** What a transfer answer says besides the VM (`transferNote`, docs/reference.md#lifecycle). */
export const TRANSFER_NOTE =
  'The server keeps running. It now bills as metered to the new account. ' +
  'SSH keys and the root password were not rotated: replace them if the previous owners should lose access.';
