import { Slug } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentClient, manifestOf, publishSimple } from '../../test/bundle-test-helpers.js';
import { cursorOf, MALFORMED_CURSORS } from '../../test/search-cursors.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>"'&`;
const BROWSER = { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } };

/** The site header every public page shares, as the reader sees it. */
const siteHeader = (html: string) => /<header class="site">.*?<\/header>/s.exec(html)?.[0] ?? '';
/** The `href`s of the page's links, unescaped as a browser reads them. */
const hrefs = (html: string) =>
  [...html.matchAll(/href="([^"]*)"/g)].map((m) => (m[1] ?? '').replaceAll('&#38;', '&'));

describe.each(databaseKinds)('the public pages on %s', (kind) => {
  let t: TestContext;
  let reader: TestClient;
  let member: TestClient;
  let slug: string;
  let otherSlug: string;
  // Pages are not API endpoints: they are fetched by path, and an HTML answer's body is its text.
  const page = async (client: TestClient, path: string, status = 200) => {
    const res = await client.get(path, BROWSER);
    const html = String(res.body);
    expect(res.status, `${path}: ${html.slice(0, 300)}`).toBe(status);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(html).not.toContain('<script');
    return html;
  };

  beforeAll(async () => {
    t = await createTestContext(kind);
    reader = t.newClient();
    member = t.newClient();
    const other = t.newClient();
    slug = (await signUpUser(member)).account.slug;
    otherSlug = (await signUpUser(other)).account.slug;
    const agent = await agentClient(t, member);
    await publishSimple(
      t,
      agent,
      manifestOf('hostile', { displayName: HOSTILE, description: HOSTILE, tags: ['weather'] }),
    );
    await publishSimple(
      t,
      agent,
      manifestOf('rain-gauge', { description: 'Counts the rain.', tags: ['weather', 'iot'] }),
    );
    await publishSimple(t, await agentClient(t, other), manifestOf('elsewhere'));
  });
  afterAll(() => t?.close());

  it('shows one site header on every public page, with sign-in or the dashboard', async () => {
    const paths = [
      '/explore',
      `/${slug}`,
      `/${slug}/rain-gauge`,
      `/${slug}/rain-gauge/versions/1`,
      `/${slug}/rain-gauge/versions/1/files/README.md`,
    ];
    for (const path of paths) {
      const header = siteHeader(await page(reader, path));
      expect(hrefs(header), path).toEqual(['/', '/explore', '/dashboard/sign-in']);
      expect(hrefs(siteHeader(await page(member, path)))).toEqual(['/', '/explore', '/dashboard/']);
    }
    for (const path of ['/no-such-account', `/${slug}/nothing`, '/a/b/c/d/e']) {
      const html = await page(reader, path, 404);
      expect(hrefs(siteHeader(html)), path).toEqual(['/', '/explore', '/dashboard/sign-in']);
    }
  });

  it('keeps JSON 404s under /api and for clients that do not ask for a page', async () => {
    for (const [path, options] of [
      ['/api/nothing-here', BROWSER],
      [`/${slug}`, {}],
    ] as const) {
      const res = await reader.get(path, options);
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ error: 'not_found' });
    }
  });

  it('searches without script: the form, tag chips, orders, cards and the next page', async () => {
    const html = await page(reader, '/explore?q=rain');
    expect(html).toMatch(/<form method="get" action="\/explore"[^>]*>/);
    expect(html).toContain('name="q" value="rain"');
    expect(html).toContain(`href="/${slug}/rain-gauge"`);
    expect(html).toContain('Counts the rain.');
    expect(html).toContain(`>${slug}</a>/rain-gauge · version 1 · published `);
    expect(html).toContain('0 adoptions');
    expect(html).not.toContain('elsewhere');
    const chip = hrefs(html).find((h) => h.includes('tag=iot'));
    expect(chip).toBe('/explore?q=rain&tag=iot');
    const sorts = hrefs(html).filter((h) => h.includes('sort='));
    expect(sorts).toEqual(['/explore?q=rain&sort=recent', '/explore?q=rain&sort=adoptions']);

    const tagged = await page(reader, '/explore?tag=weather');
    expect(tagged).toContain(`/${slug}/rain-gauge"`);
    expect(tagged).toContain(`/${slug}/hostile"`);
    expect(tagged).not.toContain('elsewhere');

    const seen: string[] = [];
    let next: string | undefined = '/explore?sort=recent&limit=1';
    while (next) {
      const html = await page(reader, next);
      seen.push(...[...html.matchAll(/<h2><a href="([^"]+)"/g)].map((m) => m[1] ?? ''));
      next = /<a href="([^"]+)" rel="next">/.exec(html)?.[1]?.replaceAll('&#38;', '&');
    }
    expect(seen).toEqual([`/${otherSlug}/elsewhere`, `/${slug}/rain-gauge`, `/${slug}/hostile`]);
  });

  it('escapes hostile text in cards and in the search box', async () => {
    const html = await page(reader, `/explore?q=${encodeURIComponent('"><script>x</script>')}`);
    expect(html).toContain('value="&#34;&#62;&#60;script&#62;x&#60;/script&#62;"');
    for (const path of ['/explore?tag=weather', `/${slug}`]) {
      const cards = await page(reader, path);
      expect(cards).not.toContain('<img');
      expect(cards).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;');
    }
  });

  it("lists an account's published bundles on its page", async () => {
    const html = await page(reader, `/${slug}`);
    expect(html).toContain(`href="/${slug}/rain-gauge"`);
    expect(html).toContain(`href="/${slug}/hostile"`);
    expect(html).not.toContain('elsewhere');
    expect(hrefs(html)).toContain(`/explore?tag=iot&account=${slug}`);
    expect(await page(reader, `/${otherSlug}`)).toContain(`href="/${otherSlug}/elsewhere"`);
  });

  it('answers a malformed search with a page saying what is wrong', async () => {
    const html = await page(reader, `/explore?q=${'a'.repeat(201)}`, 400);
    expect(html).toContain('Use at most 200 characters');
    await page(reader, '/explore?cursor=nonsense', 400);
    await page(reader, `/${slug}?cursor=nonsense`, 400);
    // Cursors in the right format whose values no calendar or column has.
    for (const [sort, key] of MALFORMED_CURSORS) {
      const explore = await page(reader, `/explore?sort=${sort}&cursor=${cursorOf(key)}`, 400);
      expect(explore).toContain('The cursor does not belong to this search');
      if (sort === 'recent')
        expect(await page(reader, `/${slug}?cursor=${cursorOf(key)}`, 400)).toContain(
          'Not a page of this list.',
        );
    }
  });

  it('reserves explore as a slug', () => {
    expect(Slug.safeParse('explore').success).toBe(false);
  });
});
