import { randomUUID } from 'node:crypto';
import { createReadStream, type Stats } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Hono } from 'hono';
import { create as createTar, type WriteEntry } from 'tar';
import { AppError } from '../errors.js';
import { installedMode, readCliBuild } from '../util/cli-build.js';
import type { AppEnv } from './app-env.js';
import { wellFormedText } from './well-formed-text.js';

/** The runtime machines install: Node (the one this service runs on) and the one-file `svc`. */
const FILE = `svc-${process.platform}-${process.arch}.tar.gz`;
export const SVC_DOWNLOAD = `/downloads/${FILE}`;

/**
 * Serves `SVC_DOWNLOAD`, what a cloud machine's first boot installs into `/opt/svc` (`bin/node`,
 * `svc.mjs` and what it loads). Built once per `svc` build and Node version into
 * `DATA_DIR/downloads`, and rebuilt when either changes; the ETag is the build's hash. Nothing
 * in it is secret: machines fetch it before they hold any credential.
 */
export function mountDownloads(
  app: Hono<AppEnv>,
  options: { readonly cliBuildDir: string; readonly dataDir: string },
): void {
  const building = new Map<string, Promise<string>>();
  app.get('/downloads/:file', wellFormedText, async (c) => {
    if (c.req.param('file') !== FILE) {
      throw new AppError('not_found', { message: `only ${FILE} is served here` });
    }
    const build = await readCliBuild(options.cliBuildDir);
    if (!build) {
      throw new AppError('not_found', {
        message: 'svc is not built on this service: run npm run build:cli',
      });
    }
    const tag = `"${build.hash.slice(0, 32)}-${process.version}"`;
    if (c.req.header('if-none-match') === tag) return c.body(null, 304);
    const name = `svc-${tag.slice(1, -1)}.tar.gz`;
    let file = building.get(name);
    if (!file) {
      file = archive(options, name);
      building.set(name, file);
      file.catch(() => building.delete(name));
    }
    const ready = await file;
    const { size } = await stat(ready);
    return c.body(Readable.toWeb(createReadStream(ready)) as ReadableStream, 200, {
      'content-type': 'application/gzip',
      'content-length': String(size),
      etag: tag,
      'cache-control': 'no-cache',
    });
  });
}

/** Writes the archive beside its final name and renames it: a reader never sees half of it. */
async function archive(
  options: { readonly cliBuildDir: string; readonly dataDir: string },
  name: string,
): Promise<string> {
  const dir = path.join(options.dataDir, 'downloads');
  const final = path.join(dir, name);
  if (await stat(final).catch(() => undefined)) return final;
  // A staging tree of links: bin/node to this process's Node, the rest to the build's files.
  const stage = path.join(dir, `.stage-${randomUUID()}`);
  await mkdir(path.join(stage, 'bin'), { recursive: true });
  try {
    await symlink(process.execPath, path.join(stage, 'bin', 'node'));
    const build = path.resolve(options.cliBuildDir);
    const top = (await readCliBuild(build))?.files.filter((f) => !f.relative.includes('/')) ?? [];
    for (const file of top)
      await symlink(path.join(build, file.relative), path.join(stage, file.relative));
    // Processes sharing DATA_DIR (PID 1 in each container) must not write the same file.
    const partial = `${final}.partial-${randomUUID()}`;
    // Modes set here, not taken from this host: a build made under the service's umask 077 is
    // 0600/0700, and the machine's root extracts them as they are (its gateway runs as `agent`).
    const onWriteEntry = (entry: WriteEntry) => {
      // Called once the entry's stat is read, before its header is written.
      const stat = entry.stat as Stats;
      stat.mode = (stat.mode & ~0o7777) | installedMode(stat.mode, entry.type === 'Directory');
    };
    await createTar(
      { gzip: true, cwd: stage, file: partial, follow: true, portable: true, onWriteEntry },
      ['bin', ...top.map((f) => f.relative)],
    );
    await rename(partial, final);
    // Older builds' archives (tens of MB each): only the newest is served. (Another process's
    // archive in the making is left alone.)
    for (const entry of await readdir(dir)) {
      if (entry !== name && /^svc-.*\.tar\.gz$/.test(entry)) {
        await rm(path.join(dir, entry), { force: true });
      }
    }
    return final;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}
