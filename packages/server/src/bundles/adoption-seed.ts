import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { type AdoptedFrom, type BundleManifest, MANIFEST_FILE } from '@svc/contract';
import { extract } from 'tar';
import { ComputeFailure } from '../adapters/compute/compute-driver.js';
import type { ObjectStore } from '../adapters/object-store/object-store.js';
import type { Executor } from '../db/database.js';
import { OPENCLAW_ENV, setEnvValues } from './adopted-env-file.js';
import * as bundles from './bundles.repo.js';
import { verifyTarball } from './verify-tarball.js';

export interface HomeSeedDeps {
  readonly db: Executor;
  readonly store: ObjectStore;
  /** The credentials an adopter gave, from their sealed form on the Agent. */
  readonly openCredentials: (agentId: string, sealed: string) => Record<string, string>;
}

/** The adoption columns of an Agent, as the provisioning job reads them. */
export interface AdoptingAgent {
  readonly id: string;
  readonly adoptedVersionId: string | null;
  readonly adoptedFrom: AdoptedFrom | null;
  readonly adoptionCredentials: string | null;
}

const gone = (from: AdoptedFrom) =>
  new ComputeFailure(
    'bundle_version_deleted',
    `${from.bundle} version ${from.version} was deleted before the Agent was provisioned`,
  );
const invalid = (message: string) => new ComputeFailure('bundle_invalid', message);

/**
 * Runs `use` with a directory holding the adopted Agent's home as it starts: the bundle version's
 * files, `bundle.json` saying where they came from, the adopter's credentials in
 * `~/.openclaw/.env`. The tarball is fetched from the object store to a private temporary
 * directory, its SHA-256 checked, its entries checked against the version's file list (regular
 * files and directories only, relative paths, declared sizes and hashes) and only then unpacked.
 * Everything is removed afterwards, whatever happens. An Agent adopting nothing gets `undefined`.
 * A version deleted before `use` returns fails it (the job then removes the machine).
 */
export async function withHomeSeed<T>(
  deps: HomeSeedDeps,
  agent: AdoptingAgent,
  use: (seedDir: string | undefined) => Promise<T>,
): Promise<T> {
  const from = agent.adoptedFrom;
  if (!from) return use(undefined);
  if (!agent.adoptedVersionId) throw gone(from);
  const version = await bundles.findVersion(deps.db, agent.adoptedVersionId);
  if (!version) throw gone(from);
  const files = (await bundles.listFiles(deps.db, version.id)).map((f) => ({
    path: f.path,
    sha256: f.sha256,
    size: Number(f.size),
  }));
  const work = await mkdtemp(path.join(tmpdir(), 'svc-adopt-'));
  try {
    const tarball = path.join(work, 'bundle.tar.gz');
    const published = { sha256: version.tarballSha256, size: Number(version.tarballSize) };
    await download(deps.store, published, tarball, () => gone(from));
    const issues = await verifyTarball(createReadStream(tarball), files);
    if (issues.length > 0) {
      const [first] = issues;
      throw invalid(`The bundle's tarball is not its declared files: ${first?.message}`);
    }
    const home = path.join(work, 'home');
    await mkdir(home, { mode: 0o700 });
    await unpack(tarball, home);
    await writeManifest(home, version.manifest, from);
    if (agent.adoptionCredentials) {
      await writeCredentials(home, deps.openCredentials(agent.id, agent.adoptionCredentials));
    }
    const made = await use(home);
    // Deleted while the machine was being made: its files must not outlive the version.
    if (!(await bundles.findVersion(deps.db, version.id))) throw gone(from);
    return made;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The object's bytes into `file`: no more than were published, and they must hash to its name. */
async function download(
  store: ObjectStore,
  object: { sha256: string; size: number },
  file: string,
  missing: () => Error,
): Promise<void> {
  const stream = await store.read(object.sha256);
  if (!stream) throw missing();
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    stream,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        size += chunk.length;
        if (size > object.size) throw invalid("The bundle's tarball is larger than published");
        hash.update(chunk);
        yield chunk;
      }
    },
    createWriteStream(file, { mode: 0o600 }),
  );
  if (hash.digest('hex') !== object.sha256) {
    throw invalid("The bundle's tarball is not the one published");
  }
}

/**
 * Unpacks a tarball `verifyTarball` accepted. The checks are repeated here so this never depends
 * on being called right: only files and directories, no owner taken from the archive (the
 * service may run as root), and tar's own refusal of absolute and `..` paths, strict.
 */
async function unpack(tarball: string, home: string): Promise<void> {
  try {
    await extract({
      file: tarball,
      cwd: home,
      strict: true,
      preserveOwner: false,
      preservePaths: false,
      filter: (_path, entry) =>
        'type' in entry && (entry.type === 'File' || entry.type === 'Directory'),
    });
  } catch (error) {
    throw invalid(
      `The bundle's tarball does not unpack: ${(error as Error).message.slice(0, 200)}`,
    );
  }
}

/** `bundle.json` as the adopter's own: no `glampId` (a publish makes a new bundle), the source. */
async function writeManifest(home: string, manifest: BundleManifest, from: AdoptedFrom) {
  const adopted: BundleManifest = { ...manifest, glampId: '', adoptedFrom: from };
  await writeFile(path.join(home, MANIFEST_FILE), `${JSON.stringify(adopted, null, 2)}\n`);
}

/** The adopter's values into `~/.openclaw/.env` (mode 600), over the placeholders `stage` left. */
async function writeCredentials(home: string, values: Record<string, string>) {
  const file = path.join(home, OPENCLAW_ENV);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const current = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  await writeFile(file, setEnvValues(current, values), { mode: 0o600 });
  await chmod(file, 0o600);
}
