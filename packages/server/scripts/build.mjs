// `npm run build:server` / `npm run build:admin`: the service and the operator CLI as JavaScript,
// each in a folder of dist/ (main.mjs and the chunks it imports when it needs them), so that
// `npm start` and `npm run admin` start on plain Node without compiling TypeScript. Our sources (the
// server's and @svc/contract's) are bundled; every other package stays an import that Node
// resolves from the repository's node_modules at run time (PGlite finds its WebAssembly beside its
// own files). Code splitting keeps the admin CLI's path that asks a running service small: the
// service's own code (the context, the database, pg-boss) is a chunk loaded only when the CLI
// opens the database itself.
// Plain JavaScript: the launchers (bin/start.mjs, bin/admin.mjs) run it before anything can load
// TypeScript.
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = path.join(import.meta.dirname, '..');

/** What each launcher runs: its entry among our sources, and the folder its build goes to. */
export const BUILDS = {
  server: { entry: path.join(root, 'src/main.ts'), dir: path.join(root, 'dist/server') },
  admin: { entry: path.join(root, 'src/admin/main.ts'), dir: path.join(root, 'dist/admin') },
};

/**
 * Bundled code keeps its sources' `import.meta`: paths a module finds beside itself (the images
 * script, the dashboard, the local driver's files) resolve as they do when it runs from src/.
 */
const sourceLocations = {
  name: 'source-locations',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const contents = source
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
      return { contents, loader: 'ts' };
    });
  },
};

/** Every package but our TypeScript ones (`@svc/contract`) stays external. */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path === '@svc/contract' || args.path.startsWith('@svc/contract/')
        ? undefined
        : { path: args.path, external: true },
    );
  },
};

/** Chunks no build uses any more are removed once this old: a CLI started before may still load them. */
const OLD_CHUNK_MS = 10 * 60_000;

/**
 * Builds into a folder of its own, then moves the chunks in (their names carry a hash of their
 * content, so none is overwritten with other code) and `main.mjs` last, by a rename: a start reads
 * the old build or the new one, never half of one, and a CLI still running the old build finds the
 * chunks it imports later. The launcher serializes builds.
 */
export async function buildEntry(name, outdir = BUILDS[name].dir) {
  const temporary = `${outdir}.${process.pid}.tmp`;
  try {
    await build({
      entryPoints: { main: BUILDS[name].entry },
      outdir: temporary,
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      plugins: [sourceLocations, externalPackages],
      logLevel: 'warning',
    });
    const chunks = path.join(outdir, 'chunks');
    await mkdir(chunks, { recursive: true });
    const built = await readdir(path.join(temporary, 'chunks'));
    for (const name of built) {
      await rename(path.join(temporary, 'chunks', name), path.join(chunks, name));
    }
    await rename(path.join(temporary, 'main.mjs'), path.join(outdir, 'main.mjs'));
    const now = Date.now();
    for (const name of await readdir(chunks)) {
      if (built.includes(name)) continue;
      const file = path.join(chunks, name);
      const info = await stat(file).catch(() => undefined);
      if (info && now - info.mtimeMs > OLD_CHUNK_MS) await rm(file, { force: true });
    }
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}

// `node scripts/build.mjs [server|admin …]`: those builds, by default both.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(BUILDS);
  for (const name of names) {
    if (!(name in BUILDS)) throw new Error(`no build "${name}": ${Object.keys(BUILDS).join(', ')}`);
    await buildEntry(name);
  }
}
