import path from 'node:path';
import { completePublish, publishBundle, type ScanFlag, STAGING_DIR } from '@svc/contract';
import { requireHome } from '../../agent-env.js';
import { ApiError, agentApiClient } from '../../api-client.js';
import { readManifest, writeManifest } from '../../glamp/manifest-file.js';
import { commandProgress, writeJson } from '../../glamp/progress.js';
import { formatFlags } from '../../glamp/report-print.js';
import { buildStagingTarball, describeStagingTree, TARBALL_FILE } from '../../glamp/staging.js';
import { removeLocalStaging, requireLocalStaging } from '../../glamp/state.js';
import { uploadAll } from '../../glamp/upload.js';
import type { CliIo } from '../../main.js';
import type { CliCommand } from '../index.js';

interface ConfirmOptions {
  readonly acceptFlags?: boolean;
  readonly json?: boolean;
}

/** `svc glamp confirm`. */
export const glampConfirmCommand: CliCommand = {
  register(glamp, io, setExitCode) {
    glamp
      .command('confirm')
      .description('Final scan, upload and publish; prints the public URL')
      .option(
        '--accept-flags',
        'publish what the scanner flagged without asking (needed without a terminal or with --json)',
      )
      .option('--json', 'print the result as one JSON document (progress only on a terminal)')
      .action(async (options: ConfirmOptions) => setExitCode(await glampConfirm(io, options)));
  },
};

/**
 * Publishing what the scanner flagged is the author's decision, made on purpose: on a terminal
 * they answer yes to the list; without one (an Agent's tool call, a pipe) only `--accept-flags`
 * says so, because nobody is there to ask.
 */
async function acceptFlags(
  io: CliIo,
  flags: readonly ScanFlag[],
  options: ConfirmOptions,
): Promise<boolean> {
  io.stderr.write(
    `The bundle keeps ${flags.length} possible secrets the scanner flagged; published, anyone can read them:\n${formatFlags(flags)}`,
  );
  if (options.acceptFlags) return true;
  // With --json a script reads stdout: no question is asked there.
  if (!io.prompt || options.json) {
    io.stderr.write(
      'svc: refusing to publish them without a terminal to ask on: remove them (or exclude them in .bundleignore) and stage again, or pass --accept-flags.\n',
    );
    return false;
  }
  const answer = (await io.prompt('Publish them? [y/N] ')).trim().toLowerCase();
  if (answer === 'y' || answer === 'yes') return true;
  io.stderr.write('Not published.\n');
  return false;
}

/**
 * The final scan (refusing flags `stage` did not report, and publishing the
 * others only when the author accepts them), the tarball, uploads (several at a time), complete;
 * then `glampId` goes back into `bundle.json`. Each long step shows its progress.
 */
async function glampConfirm(io: CliIo, options: ConfirmOptions): Promise<number> {
  const home = requireHome(io.env);
  const api = await agentApiClient(io);
  const state = await requireLocalStaging(home);
  const manifest = await readManifest(home);
  const isJson = options.json === true;
  const progress = commandProgress(io, isJson);
  const refuse = (reason: string, flags: readonly ScanFlag[]) => {
    if (isJson) writeJson(io, { published: false, reason, flags });
    return 1;
  };
  const described = await progress.run('check', (p) => describeStagingTree(home, p));
  const known = new Set(state.flagFingerprints);
  const fresh = described.flags.filter((f) => !known.has(f.fingerprint));
  if (fresh.length > 0) {
    io.stderr.write(
      `svc: refusing to publish: flags that stage did not report:\n${formatFlags(fresh)}Remove them, or run "svc glamp stage" again to review them.\n`,
    );
    return refuse('unreported_flags', fresh);
  }
  if (described.flags.length > 0 && !(await acceptFlags(io, described.flags, options))) {
    return refuse('flags_not_accepted', described.flags);
  }
  const tarball = await progress.run('tarball', (p) =>
    buildStagingTarball(home, described.files, p),
  );
  const publish = await progress
    .wait(
      'Asking the service where to upload',
      api(publishBundle, {
        params: { slug: manifest.glampId || 'new' },
        body: { stagingId: state.stagingId, manifest, files: described.files, tarball },
      }),
    )
    .catch((error) => {
      if (error instanceof ApiError && error.error === 'not_found' && manifest.glampId) {
        throw new Error(
          `the bundle ${manifest.glampId} no longer exists (deleted?): empty "glampId" in bundle.json to publish it anew`,
        );
      }
      throw error;
    });
  const stagingDir = path.join(home, STAGING_DIR);
  const sources = new Map<string, string>([[tarball.sha256, path.join(home, TARBALL_FILE)]]);
  for (const f of described.files) sources.set(f.sha256, path.join(stagingDir, f.path));
  await progress.run('upload', (p) =>
    uploadAll(publish.uploads, (upload) => sources.get(upload.sha256) as string, p),
  );
  const done = await progress.wait(
    'The service checks the upload',
    api(completePublish, {
      params: { slug: publish.bundleId },
      body: { stagingId: state.stagingId },
    }),
  );
  await writeManifest(home, { ...manifest, glampId: done.bundleId });
  await removeLocalStaging(home);
  if (isJson) {
    writeJson(io, {
      published: true,
      bundleId: done.bundleId,
      version: done.version,
      url: done.url,
      fileCount: described.files.length,
      totalBytes: described.files.reduce((sum, f) => sum + f.size, 0),
      tarball,
      uploaded: {
        objects: publish.uploads.length,
        bytes: publish.uploads.reduce((sum, u) => sum + u.size, 0),
      },
      steps: progress.steps,
    });
  } else io.stdout.write(`Published version ${done.version}: ${done.url}\n`);
  return 0;
}
