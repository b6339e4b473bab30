import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

export interface Asset {
  readonly type: string;
  readonly body: string;
}

const require = createRequire(import.meta.url);
const webDir = path.join(import.meta.dirname, 'web');

/** `buildAssets`, run once on first use and remembered (a failed build is tried again). */
export function lazyAssets(): () => Promise<ReadonlyMap<string, Asset>> {
  let built: Promise<ReadonlyMap<string, Asset>> | undefined;
  return () => {
    built ??= buildAssets().catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
}

/**
 * The terminal and editor pages' scripts (xterm.js, CodeMirror 6), bundled by the gateway itself,
 * so the VM serves them without a build step or anything fetched from elsewhere.
 */
export async function buildAssets(): Promise<ReadonlyMap<string, Asset>> {
  const result = await build({
    entryPoints: {
      terminal: path.join(webDir, 'terminal.ts'),
      editor: path.join(webDir, 'editor.ts'),
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
    assets.set(path.basename(file.path), {
      type: 'text/javascript; charset=utf-8',
      body: file.text,
    });
  }
  const xtermCss = await readFile(require.resolve('@xterm/xterm/css/xterm.css'), 'utf8');
  assets.set('xterm.css', { type: 'text/css; charset=utf-8', body: xtermCss });
  return assets;
}
