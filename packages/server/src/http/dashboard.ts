import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Context, Hono } from 'hono';
import type { AppEnv } from './app-env.js';
import { wellFormedText } from './well-formed-text.js';

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Vite names every asset by its content hash, so a year's cache never serves a stale one. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
const FILE_CACHE = 'public, max-age=3600';

const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>svc</title></head>
<body>
<h1>The dashboard is not built</h1>
<p>Run <code>npm run build</code> in the repository, then reload this page. The API is served at <code>/api/</code> meanwhile.</p>
</body>
</html>
`;

/**
 * Serves the built dashboard: `/` and every `/dashboard/...` path. Files of the build are served
 * as they are (hashed assets cached for a year); any other `/dashboard/...` path gets
 * `index.html`, uncached, and the dashboard's router takes over. Nothing else is claimed:
 * `/api/*`, `/healthz`, `/readyz` and the public `/{accountSlug}/{name}` pages stay free.
 */
export function mountDashboard(app: Hono<AppEnv>, dir: string): void {
  const root = path.resolve(dir);

  const index = async (c: Context<AppEnv>) => {
    const html = await readFile(path.join(root, 'index.html'), 'utf8').catch(() => null);
    if (html === null) {
      return c.html(NOT_BUILT, 503, { 'cache-control': 'no-store' });
    }
    return c.html(html, 200, {
      'cache-control': 'no-cache',
      // The Apps page opens the OAuth provider's consent screen in a popup that reports back.
      'cross-origin-opener-policy': 'same-origin-allow-popups',
    });
  };

  app.get('/', index);
  app.get('/dashboard', (c) => c.redirect('/dashboard/', 302));
  app.get('/dashboard/:path{.*}', wellFormedText, async (c) => {
    // Hono hands the path over percent-decoded; `resolve` then folds any `..` for the check.
    const relative = c.req.path.slice('/dashboard/'.length);
    const file = path.resolve(root, relative);
    const inside = file.startsWith(root + path.sep) && path.basename(file) !== 'index.html';
    const type = TYPES[path.extname(file)];
    if (inside && type && (await isFile(file))) {
      const cache = relative.startsWith('assets/') ? ASSET_CACHE : FILE_CACHE;
      return c.body(await readFile(file), 200, { 'content-type': type, 'cache-control': cache });
    }
    // A missing hashed asset is an old page asking for a replaced build: say so, not index.html.
    if (relative.startsWith('assets/')) return c.notFound();
    return index(c);
  });
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}
