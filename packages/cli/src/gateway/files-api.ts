import { lstat, readdir, readFile, realpath, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ErrorCode } from '@svc/contract';

/** Files larger than this open read-only elsewhere; the built-in editor is for text. */
export const MAX_EDIT_BYTES = 2 * 1024 * 1024;

/** The error code of each status a file access fails with (the service's envelope). */
const CODES = {
  400: 'invalid_request',
  403: 'forbidden',
  404: 'not_found',
  409: 'invalid_state',
  413: 'payload_too_large',
} as const satisfies Record<number, ErrorCode>;

export class FileAccessError extends Error {
  constructor(
    readonly status: keyof typeof CODES,
    message: string,
  ) {
    super(message);
  }

  get code(): ErrorCode {
    return CODES[this.status];
  }
}

/**
 * The home directory as the built-in editor sees it: paths are relative to it, and nothing
 * outside it is reachable, through `..` or through a symbolic link.
 */
export class HomeFiles {
  constructor(readonly home: string) {}

  async #resolve(relative: string): Promise<string> {
    const home = await realpath(this.home);
    const target = path.resolve(home, relative.replace(/^\/+/, ''));
    if (target !== home && !target.startsWith(`${home}${path.sep}`)) {
      throw new FileAccessError(403, 'outside the home directory');
    }
    const real = await realpath(target).catch(() => {
      throw new FileAccessError(404, 'no such file');
    });
    if (real !== home && !real.startsWith(`${home}${path.sep}`)) {
      throw new FileAccessError(403, 'links outside the home directory');
    }
    return real;
  }

  /** One directory's entries, directories first. */
  async list(relative: string): Promise<{ name: string; kind: 'dir' | 'file' }[]> {
    const dir = await this.#resolve(relative);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
      throw new FileAccessError(400, 'not a directory');
    });
    return entries
      .filter((e) => e.isDirectory() || e.isFile() || e.isSymbolicLink())
      .map((e) => ({ name: e.name, kind: e.isDirectory() ? ('dir' as const) : ('file' as const) }))
      .sort((a, b) =>
        a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'dir' ? -1 : 1,
      );
  }

  async read(relative: string): Promise<string> {
    const file = await this.#resolve(relative);
    const info = await lstat(file);
    if (!info.isFile()) throw new FileAccessError(400, 'not a file');
    if (info.size > MAX_EDIT_BYTES) throw new FileAccessError(413, 'too large for the editor');
    return readFile(file, 'utf8');
  }

  /**
   * Where an entry of the home is (the real path of its directory, and its own name, not
   * followed), with what is there now: `write`, `create`, `rename` and `remove` act on the entry
   * itself, so a symbolic link is renamed or removed as a link, never its target.
   */
  async #entry(relative: string) {
    const name = path.basename(relative);
    if (!name || name === '.' || name === '..' || relative.endsWith('/')) {
      throw new FileAccessError(400, 'not a file name');
    }
    const parent = await this.#resolve(path.dirname(relative.replace(/^\/+/, '')) || '.');
    const file = path.join(parent, name);
    return { file, existing: await lstat(file).catch(() => undefined) };
  }

  /** Replaces an existing file's content, or creates a file in an existing directory. */
  async write(relative: string, content: string): Promise<void> {
    if (Buffer.byteLength(content) > MAX_EDIT_BYTES) {
      throw new FileAccessError(413, 'too large for the editor');
    }
    const { file, existing } = await this.#entry(relative);
    if (existing?.isSymbolicLink()) await this.#resolve(relative);
    else if (existing && !existing.isFile()) throw new FileAccessError(400, 'not a file');
    await writeFile(existing?.isSymbolicLink() ? await realpath(file) : file, content);
  }

  /** A new, empty file in an existing directory; never over anything already there. */
  async create(relative: string): Promise<void> {
    const { file, existing } = await this.#entry(relative);
    if (existing) throw new FileAccessError(409, 'something of that name is already there');
    await writeFile(file, '', { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'EEXIST'
        ? new FileAccessError(409, 'something of that name is already there')
        : error;
    });
  }

  /** Moves a file or directory to a new name in the home; never over anything already there. */
  async rename(from: string, to: string): Promise<void> {
    const source = await this.#entry(from);
    if (!source.existing) throw new FileAccessError(404, 'no such file');
    const target = await this.#entry(to);
    if (target.existing) throw new FileAccessError(409, 'something of that name is already there');
    if (`${target.file}${path.sep}`.startsWith(`${source.file}${path.sep}`)) {
      throw new FileAccessError(400, 'a directory cannot move into itself');
    }
    await rename(source.file, target.file);
  }

  /** Removes a file (a symbolic link: the link, not what it points to); directories stay. */
  async remove(relative: string): Promise<void> {
    const { file, existing } = await this.#entry(relative);
    if (!existing) throw new FileAccessError(404, 'no such file');
    if (existing.isDirectory()) throw new FileAccessError(400, 'a directory, not a file');
    await unlink(file);
  }
}
