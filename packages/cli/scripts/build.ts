// `npm run build:cli`: `svc` built to run on a bare Node 24 with no node_modules, in dist/:
//   svc.mjs            the CLI's entry: commander and the list of commands
//   chunk-*.mjs        the commands and every dependency but node-pty, loaded only by the
//                      command that runs them, so `svc --help` reads a few kilobytes
//   scan-worker.mjs    the secret scanner's thread (ScanPool finds it beside svc.mjs)
//   assets/            the gateway's terminal and editor scripts and xterm.css, built ahead
//   node_modules/node-pty/  the one native addon (N-API), its JavaScript and its Linux binary
// Agents get this folder as /opt/svc (scripts/incus-image-agent-root.sh, and the incus driver at
// each start when it changed); the local driver's machines and the repository's `npx svc` run
// it in place, built first when it is missing or older than the sources (bin/ensure-build.js).
import { chmod, cp, mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';
import { buildAssets } from '../src/gateway/assets.js';

const root = path.join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);

/** Bundled CommonJS dependencies call `require`; an ES module has none of its own. */
const REQUIRE_SHIM =
  "import { createRequire as __svcRequire } from 'node:module'; const require = __svcRequire(import.meta.url);";

/**
 * Builds into `dist` (default `packages/cli/dist`; tests build into a folder of their own). The
 * build is made beside it and moved in whole, so a `svc` starting meanwhile finds the old build
 * or the new one, never half of one.
 */
export async function buildCli(target = path.join(root, 'dist')): Promise<void> {
  // Sources changed while building are newer than the build, so the next check builds again.
  const sourcesAsOf = new Date();
  // In `.tmp/` beside the target (git ignores it): a rename away, on the same file system.
  const scratch = path.join(path.dirname(target), '.tmp');
  const dist = path.join(scratch, `svc-build-${process.pid}`);
  await rm(dist, { recursive: true, force: true });
  await build({
    entryPoints: {
      svc: path.join(root, 'src/bundle-entry.ts'),
      'scan-worker': path.join(root, 'src/glamp/scanner/scan-worker-entry.ts'),
    },
    outdir: dist,
    outExtension: { '.js': '.mjs' },
    // Chunks sit beside svc.mjs: modules find the assets and the scanner's thread by their own URL.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // node-pty loads its binary relative to its own files; esbuild is only for building assets,
    // which the bundle has ready.
    external: ['node-pty', 'esbuild'],
    banner: { js: `#!/usr/bin/env node\n${REQUIRE_SHIM}` },
    minify: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  await chmod(path.join(dist, 'svc.mjs'), 0o755);
  await mkdir(path.join(dist, 'assets'));
  for (const [name, asset] of await buildAssets()) {
    await writeFile(path.join(dist, 'assets', name), asset.body);
  }
  const pty = path.dirname(require.resolve('node-pty/package.json'));
  const ptyOut = path.join(dist, 'node_modules/node-pty');
  await cp(path.join(pty, 'package.json'), path.join(ptyOut, 'package.json'));
  await cp(path.join(pty, 'LICENSE'), path.join(ptyOut, 'LICENSE'));
  await cp(path.join(pty, 'lib'), path.join(ptyOut, 'lib'), {
    recursive: true,
    filter: (source) => !/\.(map|test\.js)$/.test(source) && !source.endsWith('testUtils.test.js'),
  });
  await cp(path.join(pty, 'build/Release/pty.node'), path.join(ptyOut, 'build/Release/pty.node'));
  await utimes(path.join(dist, 'svc.mjs'), sourcesAsOf, sourcesAsOf);
  const old = path.join(scratch, `svc-old-${process.pid}`);
  await rename(target, old).catch(() => undefined);
  await rename(dist, target);
  await rm(old, { recursive: true, force: true });
}

await buildCli(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
