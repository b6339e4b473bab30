import { open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { isProcessAlive } from '../util/is-process-alive.js';

/**
 * Claims a PGlite data directory for this process. Two processes writing one PGlite directory
 * corrupt it, so a second one must fail at start with a clear message instead.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  // Beside the directory, not in it: PGlite initializes only an empty directory.
  const file = `${path.resolve(dataDir)}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(await readFile(file, 'utf8').catch(() => ''));
      if (pid && isProcessAlive(pid)) {
        throw new Error(
          `The database in ${dataDir} is in use by process ${pid}. Stop it first, or talk to it ` +
            'with `npm run admin`, which goes through the running service.',
        );
      }
      // Left behind by a process that no longer runs.
      await rm(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}
