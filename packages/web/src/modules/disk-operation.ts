import type { DiskOperation } from '@svc/contract';

/** A disk operation under way, as a sentence's subject ("A snapshot is being taken"). */
export const DISK_OPERATION_UNDER_WAY: Record<NonNullable<DiskOperation>, string> = {
  snapshot: 'A snapshot is being taken',
  restore: 'The disk is being restored from a snapshot',
};

/**
 * Why the machine's other buttons are disabled while a snapshot or restore runs: the service
 * refuses moves and other disk operations until it ends (409).
 */
export const whyWaitForDisk = (operation: DiskOperation | undefined, what: string) =>
  operation ? `${DISK_OPERATION_UNDER_WAY[operation]}: ${what} once it ends.` : undefined;
