import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openHomeSeed } from '@svc/contract/agent-env-push';
import { extract } from 'tar';
import { readAgentEnv } from '../agent-env.js';

/** What the gateway answers a home seed: 204 when taken, else the status and a short reason. */
export interface SeedAnswer {
  readonly status: 204 | 400 | 403 | 404 | 409;
  readonly reason?: string;
}

/** The SHA-256 of the seed this home took; its presence means the home is seeded for good. */
const SEEDED_FILE = '.crabglamp/home-seed';
const PARTIAL_FILE = '.crabglamp/home-seed.partial';

/**
 * Takes the service's signed push of an adopted home (see `@svc/contract/agent-env-push`):
 * once per machine, the tarball streamed to a file beside `agent.env` with its size and hash
 * checked against the signed claim, then unpacked into the home: regular files and directories
 * only, never an owner from the archive, never through a link, nothing under `.crabglamp/`. The
 * service checked the same tarball against the bundle's published file list before sending it.
 * The same seed again (a retry whose answer was lost) is taken as done.
 */
export class HomeSeeds {
  #turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly home: string) {}

  take(
    body: Readable,
    claim: string | undefined,
    signature: string | undefined,
    now = Date.now(),
  ): Promise<SeedAnswer> {
    const turn = this.#turn.then(() => this.#take(body, claim, signature, now));
    this.#turn = turn.catch(() => undefined);
    return turn;
  }

  async #take(
    body: Readable,
    claim: string | undefined,
    signature: string | undefined,
    now: number,
  ): Promise<SeedAnswer> {
    const { SVC_PUSH_KEY: pushKey, SVC_AGENT_ID: agentId } = await readAgentEnv(this.home);
    if (!pushKey || !agentId) return { status: 404, reason: 'this machine takes no pushes' };
    let opened: ReturnType<typeof openHomeSeed>;
    try {
      opened = openHomeSeed(claim, signature, { pushKey, agentId }, now);
    } catch {
      opened = 'not a home seed';
    }
    if (typeof opened === 'string') return { status: 403, reason: opened };
    const seeded = await readFile(path.join(this.home, SEEDED_FILE), 'utf8').catch(() => '');
    if (seeded !== '') {
      body.resume();
      return seeded.trim() === opened.sha256
        ? { status: 204 }
        : { status: 409, reason: 'this home is seeded already' };
    }
    const partial = path.join(this.home, PARTIAL_FILE);
    try {
      const received = await receive(body, partial, opened.size);
      if (received.size !== opened.size || received.sha256 !== opened.sha256) {
        return { status: 400, reason: 'not the bytes the claim names' };
      }
      await unpack(partial, this.home);
      await writeFile(path.join(this.home, SEEDED_FILE), `${opened.sha256}\n`, { mode: 0o600 });
      return { status: 204 };
    } catch (error) {
      return { status: 400, reason: (error as Error).message.slice(0, 200) };
    } finally {
      await rm(partial, { force: true });
    }
  }
}

/** The body into `file`, stopping past `limit` bytes; its size and SHA-256. */
async function receive(body: Readable, file: string, limit: number) {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    body,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        size += chunk.length;
        if (size > limit) throw new Error('more bytes than the claim names');
        hash.update(chunk);
        yield chunk;
      }
    },
    createWriteStream(file, { mode: 0o600 }),
  );
  return { size, sha256: hash.digest('hex') };
}

const isOwnState = (entryPath: string) => /^(?:\.\/)?\.crabglamp(?:\/|$)/.test(entryPath);

async function unpack(file: string, home: string): Promise<void> {
  const refused: string[] = [];
  await extract({
    file,
    cwd: home,
    strict: true,
    preserveOwner: false,
    preservePaths: false,
    filter: (entryPath, entry) => {
      const ok =
        'type' in entry &&
        (entry.type === 'File' || entry.type === 'Directory') &&
        !isOwnState(entryPath);
      if (!ok) refused.push(entryPath);
      return ok;
    },
  });
  if (refused.length > 0) throw new Error(`refused entries: ${refused.slice(0, 3).join(', ')}`);
}
