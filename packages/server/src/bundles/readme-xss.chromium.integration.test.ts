import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../test/browser.js';
import {
  agentClient,
  complete,
  manifestOf,
  stageAndPublish,
} from '../../test/bundle-test-helpers.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { XSS_README } from '../../test/xss-payloads.js';
import { renderReadme } from './readme.js';

/** What a page did that a hostile README could make it do. */
async function probe(browser: Browser, url: string) {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  const response = await page.goto(url, { waitUntil: 'load' });
  // Give timers and late event handlers (onload, onerror of broken images) a moment.
  await page.waitForTimeout(500);
  // A string, so the server's type checking (no DOM library) needs no browser types.
  const dom = (await page.evaluate(`({
    scripts: document.querySelectorAll('script').length,
    handlers: [...document.querySelectorAll('*')].flatMap((el) =>
      [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => el.tagName + '[' + a.name + ']'),
    ),
    jsLinks: [...document.querySelectorAll('a, area')]
      .map((a) => a.protocol)
      .filter((p) => p === 'javascript:' || p === 'vbscript:' || p === 'data:'),
    flag: window.__xss ?? 0,
  })`)) as { scripts: number; handlers: string[]; jsLinks: string[]; flag: number };
  await page.close();
  return { status: response?.status(), dialogs, ...dom };
}

/**
 * The README page in a real browser: a README made of XSS vectors, loaded from the service (with
 * its CSP) and, to prove the sanitizer alone holds, as bare HTML without any CSP.
 */
describe('README XSS in Chromium', () => {
  let t: TestContext;
  let browser: Browser;
  let appUrl = '';
  let bareUrl = '';
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    t = await createTestContext('pglite');
    const owner = t.newClient();
    const { account } = await signUpUser(owner);
    const agent = await agentClient(t, owner);
    const run = await stageAndPublish(t, agent, {
      manifest: manifestOf('hostile'),
      files: { 'README.md': Buffer.from(XSS_README) },
    });
    await complete(agent, run.bundleId, run.stagingId);
    const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise((r) => server.once('listening', r));
    closers.push(() => new Promise((r) => server.close(r)));
    appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${account.slug}/hostile`;
    const bare = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><html><body>${renderReadme(XSS_README)}</body></html>`);
    }).listen(0, '127.0.0.1');
    await new Promise((r) => bare.once('listening', r));
    closers.push(() => new Promise((r) => bare.close(r)));
    bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const close of closers) await close();
    await t?.close();
  });

  it('runs no script, keeps no event handler and no javascript: link', async () => {
    for (const url of [appUrl, bareUrl]) {
      const seen = await probe(browser, url);
      console.log(
        `Chromium ${url === appUrl ? 'bundle page' : 'bare README'}: ${JSON.stringify(seen)}`,
      );
      expect(seen).toEqual({
        status: 200,
        dialogs: [],
        scripts: 0,
        handlers: [],
        jsLinks: [],
        flag: 0,
      });
    }
  }, 60_000);

  it('would notice a script that did run (the probe can fail)', async () => {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', async (d) => {
      dialogs.push(d.message());
      await d.dismiss();
    });
    await page.setContent('<img src=x onerror="alert(7)">');
    await page.waitForTimeout(300);
    await page.close();
    expect(dialogs).toEqual(['7']);
  });
});
