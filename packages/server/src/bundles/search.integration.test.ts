import {
  type BundleCard,
  deleteBundle,
  deleteBundleVersion,
  type SearchQuery,
  SearchResult,
  searchBundles,
} from '@svc/contract';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentClient,
  manifestOf,
  publishSimple,
  stageAndPublish,
} from '../../test/bundle-test-helpers.js';
import { cursorOf, MALFORMED_CURSORS } from '../../test/search-cursors.js';
import { errorOf, type TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

const names = (items: readonly BundleCard[]) => items.map((i) => i.name);

describe.each(databaseKinds)('GET /api/glamps on %s', (kind) => {
  let t: TestContext;
  let reader: TestClient;
  let a: string;
  let b: string;
  /** A search that must succeed; a failure shows the service's logged errors. */
  const search = async (query: SearchQuery) => {
    const res = await reader.send(searchBundles, { query });
    expect(res.status, t.logs.lines.filter((l) => l.includes('"err"')).join('\n')).toBe(200);
    return SearchResult.parse(res.body);
  };
  /** Every page of a search, following `nextCursor`. */
  const allPages = async (query: SearchQuery) => {
    const seen: BundleCard[] = [];
    let cursor: string | null = null;
    do {
      const page: SearchResult = await search({
        ...query,
        limit: 2,
        ...(cursor !== null && { cursor }),
      });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return seen;
  };

  beforeAll(async () => {
    t = await createTestContext(kind);
    reader = t.newClient();
    const ownerA = t.newClient();
    const ownerB = t.newClient();
    a = (await signUpUser(ownerA)).account.slug;
    b = (await signUpUser(ownerB)).account.slug;
    const agentA = await agentClient(t, ownerA);
    const agentB = await agentClient(t, ownerB);
    const publish = (agent: typeof agentA, name: string, extra: object) =>
      publishSimple(t, agent, manifestOf(name, extra));
    await publish(agentA, 'weather-station', {
      displayName: 'Weather Station',
      description: 'Reads the sky every hour.',
      tags: ['weather', 'iot'],
    });
    await publish(agentA, 'sky-notes', {
      displayName: 'Sky notes',
      description: 'A notebook about weather and clouds.',
      tags: ['notes'],
    });
    await publish(agentB, 'garden-helper', {
      displayName: 'Garden helper',
      description: 'Waters plants when the weather is dry.',
      tags: ['garden', 'iot'],
    });
    for (let i = 1; i <= 5; i++)
      await publish(i % 2 ? agentA : agentB, `twin-${i}`, { description: 'Identical twin text.' });
    // Started but never completed: not public.
    await stageAndPublish(t, agentB, {
      manifest: manifestOf('weather-draft', { description: 'weather' }),
      files: { 'a.txt': Buffer.from('a') },
    });
    await publish(agentB, 'weather-gone', { description: 'weather' });
    await ownerB.call(deleteBundle, { params: { accountSlug: b, name: 'weather-gone' } });
    const twice = await publish(agentB, 'twice', { description: 'Published twice.' });
    await publish(agentB, 'twice', { description: 'Published twice.', glampId: twice.bundleId });
    await ownerB.call(deleteBundleVersion, {
      params: { accountSlug: b, name: 'twice', version: '2' },
    });
    // Ties on every key but the id: the order must still be total.
    await t.ctx.database.db
      .updateTable('bundles')
      .set({ lastPublishedAt: new Date('2026-01-01T00:00:00.123Z'), adoptionCount: 3 })
      .where('name', 'in', ['twin-2', 'twin-3', 'twin-4'])
      .execute();
  });
  afterAll(() => t?.close());

  it('ranks a hit in the name above one in the description, and describes each card', async () => {
    const { items } = await search({ q: 'weather' });
    expect(names(items)[0]).toBe('weather-station');
    expect(new Set(names(items))).toEqual(
      new Set(['weather-station', 'sky-notes', 'garden-helper']),
    );
    expect(items[0]).toMatchObject({
      accountSlug: a,
      displayName: 'Weather Station',
      description: 'Reads the sky every hour.',
      tags: ['weather', 'iot'],
      latestVersion: 1,
      adoptions: 0,
      url: `${t.ctx.config.http.publicUrl}/${a}/weather-station`,
    });
  });

  it('matches the last word as a prefix while it is typed', async () => {
    expect(new Set(names((await search({ q: 'weat' })).items))).toEqual(
      new Set(['weather-station', 'sky-notes', 'garden-helper']),
    );
    expect(new Set(names((await search({ q: 'sky wea' })).items))).toEqual(
      new Set(['weather-station', 'sky-notes']),
    );
    expect(names((await search({ q: 'garden -weather' })).items)).toEqual([]);
    expect(names((await search({ q: '"the weather"' })).items)).toEqual(['garden-helper']);
  });

  it('matches tags exactly, all of them, and filters by account', async () => {
    expect(new Set(names((await search({ tag: 'iot' })).items))).toEqual(
      new Set(['weather-station', 'garden-helper']),
    );
    expect(names((await search({ tag: ['iot', 'garden'] })).items)).toEqual(['garden-helper']);
    expect(names((await search({ tag: 'io' })).items)).toEqual([]);
    expect(new Set(names((await search({ account: b, q: 'weather' })).items))).toEqual(
      new Set(['garden-helper']),
    );
    expect(names((await search({ account: a })).items).sort()).toEqual(
      ['sky-notes', 'twin-1', 'twin-3', 'twin-5', 'weather-station'].sort(),
    );
  });

  it('lists published versions only: no draft, no deleted bundle, the newest remaining version', async () => {
    const all = await allPages({ sort: 'recent' });
    expect(names(all)).not.toContain('weather-draft');
    expect(names(all)).not.toContain('weather-gone');
    expect(all.find((i) => i.name === 'twice')?.latestVersion).toBe(1);
    expect(all).toHaveLength(9);
  });

  it('pages through every order with cursors that never repeat or skip', async () => {
    const orders: SearchQuery[] = [
      { sort: 'recent' },
      { sort: 'adoptions' },
      { q: 'twin' },
      { q: 't' },
      { sort: 'relevance' },
    ];
    for (const query of orders) {
      const whole = (await search({ ...query, limit: 50 })).items;
      const paged = await allPages(query);
      expect(names(paged), JSON.stringify(query)).toEqual(names(whole));
      expect(new Set(paged.map((i) => i.url)).size).toBe(paged.length);
    }
    const recent = (await search({ sort: 'recent', limit: 50 })).items.map(
      (i) => i.lastPublishedAt,
    );
    expect(recent).toEqual([...recent].sort().reverse());
    expect(names((await search({ sort: 'adoptions', limit: 3 })).items).sort()).toEqual([
      'twin-2',
      'twin-3',
      'twin-4',
    ]);
  });

  it('answers bad input with 400 invalid_request', async () => {
    const cursor = (await search({ sort: 'recent', limit: 1 })).nextCursor as string;
    for (const query of [
      `q=${'a'.repeat(201)}`,
      'limit=0',
      'limit=51',
      'sort=popular',
      'tag=Not%20A%20Tag',
      'account=-x',
      'cursor=garbage',
      `sort=adoptions&cursor=${cursor}`,
      ...MALFORMED_CURSORS.map(([sort, key]) => `sort=${sort}&cursor=${cursorOf(key)}`),
    ]) {
      // A raw path: each query is one the search's schema refuses on purpose.
      const res = await reader.get(`/api/glamps?${query}`);
      expect(res.status, `${query} → ${JSON.stringify(res.body)}`).toBe(400);
      const refusal = errorOf(res);
      expect(refusal.error).toBe('invalid_request');
      if (query.includes('cursor='))
        expect(refusal.issues?.map((i) => i.path)).toEqual([['query', 'cursor']]);
    }
    expect((await reader.call(searchBundles, { query: { q: 'a'.repeat(200) } })).status).toBe(200);
  });

  it('takes any text without a 500, operators and quotes included', async () => {
    const operator = fc.constantFrom('&', '|', '!', '(', ')', ':', '*', "'", '"', '-', '<->', ' ');
    const piece = fc.oneof(
      operator,
      fc.constantFrom('weather', 'wea', 'or', 'sky', '\\', 'ª', 'ß', '日本', '🦀'),
      fc.string({ unit: 'binary', maxLength: 8 }),
    );
    const text = fc
      .array(piece, { maxLength: 12 })
      .map((parts) => parts.join('').replaceAll('\u0000', '').slice(0, 200))
      .filter((s) => s.isWellFormed());
    await fc.assert(
      fc.asyncProperty(text, async (q) => {
        const res = await reader.send(searchBundles, { query: { q } });
        expect(res.status, `${JSON.stringify(q)} → ${JSON.stringify(res.body)}`).toBe(200);
      }),
      { numRuns: 150 },
    );
  });
});
