import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEnv } from './app-env.js';
import { mountDashboard } from './dashboard.js';

const appOn = (dir: string) => {
  const app = new Hono<AppEnv>();
  app.get('/api/me', (c) => c.json({ api: true }));
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  mountDashboard(app, dir);
  app.notFound((c) => c.json({ error: 'not_found' }, 404));
  return app;
};

describe('serving the built dashboard', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-dashboard-'));
    await mkdir(path.join(dir, 'dist/assets'), { recursive: true });
    await writeFile(path.join(dir, 'dist/index.html'), '<!doctype html><div id="root"></div>');
    await writeFile(path.join(dir, 'dist/assets/index-abc123.js'), 'console.log(1)');
    await writeFile(path.join(dir, 'dist/favicon.svg'), '<svg/>');
    await writeFile(path.join(dir, 'secret.txt'), 'outside the build');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('answers / and every /dashboard/... page with index.html, uncached', async () => {
    const app = appOn(path.join(dir, 'dist'));
    for (const url of ['/', '/dashboard/', '/dashboard/accounts/acme/agents/123']) {
      const res = await app.request(url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      // The Apps page's popup must be able to report back to it.
      expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin-allow-popups');
      expect(await res.text()).toContain('<div id="root">');
    }
    expect((await app.request('/dashboard')).headers.get('location')).toBe('/dashboard/');
  });

  it('serves hashed assets for a year and other files for an hour', async () => {
    const app = appOn(path.join(dir, 'dist'));
    const asset = await app.request('/dashboard/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const icon = await app.request('/dashboard/favicon.svg');
    expect(icon.headers.get('cache-control')).toBe('public, max-age=3600');
    expect((await app.request('/dashboard/assets/gone-000.js')).status).toBe(404);
  });

  it('leaves /api, /healthz and two-segment public paths alone, and never leaves the build', async () => {
    const app = appOn(path.join(dir, 'dist'));
    expect(await (await app.request('/api/me')).json()).toEqual({ api: true });
    expect(await (await app.request('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await app.request('/acme/my-bundle')).status).toBe(404);
    expect((await app.request('/api/unknown')).status).toBe(404);
    for (const url of ['/dashboard/..%2fsecret.txt', '/dashboard/%2e%2e/secret.txt']) {
      const res = await app.request(url);
      expect(await res.text(), url).not.toContain('outside the build');
    }
  });

  it('says to run the build when there is none', async () => {
    const app = appOn(path.join(dir, 'missing'));
    const res = await app.request('/');
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
    expect((await app.request('/dashboard/accounts/x/agents')).status).toBe(503);
  });
});
