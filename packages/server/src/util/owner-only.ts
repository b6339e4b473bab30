import { chmod, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Takes the group and other bits off `root` and every entry under it that this user owns (0755
 * becomes 0700, 0666 0600); answers how many changed. Symbolic links are left alone: their own
 * mode means nothing, and what they point to is not ours to change.
 */
export async function makeOwnerOnly(root: string): Promise<number> {
  const uid = process.getuid?.();
  let changed = 0;
  const visit = async (file: string) => {
    const stats = await lstat(file);
    if (stats.isSymbolicLink()) return;
    if ((uid === undefined || stats.uid === uid) && stats.mode & 0o077) {
      await chmod(file, stats.mode & 0o700);
      changed += 1;
    }
    if (stats.isDirectory()) {
      for (const name of await readdir(file)) await visit(path.join(file, name));
    }
  };
  await visit(root);
  return changed;
}
