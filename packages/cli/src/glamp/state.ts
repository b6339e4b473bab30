import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { STAGING_DIR } from '@svc/contract';
import { STATE_FILE, TARBALL_FILE } from './staging.js';

/** What `stage` leaves for `rescan`, `confirm` and `cancel`: the staging id and its flags. */
export interface LocalStaging {
  readonly stagingId: string;
  /** Fingerprints of the flags `stage` reported: `confirm` refuses any other. */
  readonly flagFingerprints: readonly string[];
}

export async function readLocalStaging(home: string): Promise<LocalStaging | undefined> {
  const text = await readFile(path.join(home, STATE_FILE), 'utf8').catch(() => undefined);
  return text ? (JSON.parse(text) as LocalStaging) : undefined;
}

/** The local staging, or an error that says how to make one. */
export async function requireLocalStaging(home: string): Promise<LocalStaging> {
  const state = await readLocalStaging(home);
  if (!state) throw new Error('nothing is staged: run "svc glamp stage" first');
  return state;
}

export async function writeLocalStaging(home: string, state: LocalStaging): Promise<void> {
  await writeFile(path.join(home, STATE_FILE), `${JSON.stringify(state)}\n`, { mode: 0o600 });
}

/** Removes the staging tree, its tarball and the local state. */
export async function removeLocalStaging(home: string): Promise<void> {
  for (const file of [STAGING_DIR, TARBALL_FILE, STATE_FILE]) {
    await rm(path.join(home, file), { recursive: true, force: true });
  }
}
