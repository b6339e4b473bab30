import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface Asset {
  readonly type: string;
  readonly body: string;
}

const require = createRequire(import.meta.url);
const webDir = path.join(import.meta.dirname, 'web');
/**
 * Where the one-file build keeps the assets it built ahead (`dist/assets`, beside `svc.mjs`);
 * from the sources there is no such folder, and they are built on first use.
 */
const PREBUILT_DIR = path.join(import.meta.dirname, 'assets');
const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * The assets built ahead, else `buildAssets`, once on first use and remembered (a failed build is
 * tried again).
 */
export function lazyAssets(): () => Promise<ReadonlyMap<string, Asset>> {
  let built: Promise<ReadonlyMap<string, Asset>> | undefined;
  return () => {
    built ??= readPrebuiltAssets()
      .then((found) => found ?? buildAssets())
      .catch((error: unknown) => {
        built = undefined;
        throw error;
      });
    return built;
  };
}

/**
 * The terminal and editor pages' scripts (xterm.js, CodeMirror 6) and the pages' stylesheet,
 * bundled by the gateway itself, so the VM serves them without a build step or anything fetched
 * from elsewhere.
 */
export async function buildAssets(): Promise<ReadonlyMap<string, Asset>> {
  // Loaded here only: the one-file build serves its assets built ahead and carries no esbuild.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: {
      terminal: path.join(webDir, 'terminal.ts'),
      editor: path.join(webDir, 'editor.ts'),
      // The pages' look, with the dashboard's tokens (packages/web/src/tokens.css) bundled in.
      gateway: path.join(webDir, 'gateway.css'),
    },
    bundle: true,
    format: 'esm',
    minify: true,
    platform: 'browser',
    target: 'es2022',
    outdir: 'out',
    write: false,
    logLevel: 'silent',
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    assets.set(name, { type: TYPES[path.extname(name)] as string, body: file.text });
  }
  const xtermCss = await readFile(require.resolve('@xterm/xterm/css/xterm.css'), 'utf8');
  assets.set('xterm.css', { type: 'text/css; charset=utf-8', body: xtermCss });
  return assets;
}

/** The assets in `PREBUILT_DIR`, or `undefined` when there are none (running from the sources). */
async function readPrebuiltAssets(): Promise<ReadonlyMap<string, Asset> | undefined> {
  const names = await readdir(PREBUILT_DIR).catch(() => undefined);
  if (!names) return undefined;
  const assets = new Map<string, Asset>();
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (type)
      assets.set(name, { type, body: await readFile(path.join(PREBUILT_DIR, name), 'utf8') });
  }
  return assets;
}
