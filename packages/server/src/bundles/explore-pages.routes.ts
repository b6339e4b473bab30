import { parseRequestPart, RESERVED_SLUGS, SearchQuery, SLUG_PATTERN } from '@svc/contract';
import type { Context, Hono } from 'hono';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import type { AppEnv } from '../http/app-env.js';
import { requireWellFormedText } from '../http/well-formed-text.js';
import { readerOf } from './bundle-pages.routes.js';
import { accountPage, explorePage, type ListState } from './explore-pages.html.js';
import { badRequestPage, notFoundPage } from './page-layout.html.js';

/** The query with an array for a name given more than once, as the API's router reads it. */
const queryValues = (c: Context) =>
  Object.fromEntries(
    Object.entries(c.req.queries()).map(([name, values]) => [
      name,
      values.length === 1 ? values[0] : values,
    ]),
  );

/** Whether the request comes from a browser asking for a page (`Accept: text/html`). */
export const wantsHtml = (c: Context) => (c.req.header('accept') ?? '').includes('text/html');

/**
 * `/explore` and `/{accountSlug}`: the search and an account's bundles as server-rendered pages,
 * usable without script (a GET form, links for tags, orders and the next page).
 */
export function mountExplorePages(app: Hono<AppEnv>, ctx: AppContext) {
  const { search } = ctx.bundles;
  const reader = (c: Context<AppEnv>) => readerOf(c, ctx.config.http.secureCookies);
  const isBadRequest = (error: unknown): error is AppError =>
    error instanceof AppError && error.code === 'invalid_request';

  app.get('/explore', async (c) => {
    requireWellFormedText(c);
    const raw = queryValues(c);
    const parsed = parseRequestPart(SearchQuery, raw, 'query');
    if (!parsed.success) {
      const problem = parsed.issues.map((i) => `${i.path.slice(1).join('.')}: ${i.message}`);
      const state = { q: typeof raw.q === 'string' ? raw.q.slice(0, 200) : '', tags: [] };
      const html = explorePage({
        reader: reader(c),
        state,
        items: [],
        nextCursor: null,
        error: problem.join('; '),
      });
      return c.html(html, 400);
    }
    const query = parsed.data;
    const state: ListState = {
      tags: query.tag === undefined ? [] : [...new Set([query.tag].flat())],
      ...(query.q !== undefined && { q: query.q }),
      ...(query.account !== undefined && { account: query.account }),
      ...(query.sort !== undefined && { sort: query.sort }),
      ...(query.limit !== undefined && { limit: query.limit }),
    };
    try {
      const result = await search.search(query);
      return c.html(explorePage({ reader: reader(c), state, ...result }));
    } catch (error) {
      if (!isBadRequest(error)) throw error;
      const html = explorePage({
        reader: reader(c),
        state,
        items: [],
        nextCursor: null,
        error: error.detail ?? 'This search cannot be answered.',
      });
      return c.html(html, 400);
    }
  });

  // One segment: an account, for a browser; anything else passes on (JSON 404 for a client).
  app.get('/:accountSlug', async (c, next) => {
    const slug = c.req.param('accountSlug');
    if (RESERVED_SLUGS.has(slug)) return next();
    requireWellFormedText(c);
    if (!wantsHtml(c)) return next();
    const notFound = () => c.html(notFoundPage(reader(c)), 404);
    if (!SLUG_PATTERN.test(slug)) return notFound();
    try {
      const account = await search.findAccount(slug);
      const cursor = c.req.query('cursor');
      const result = await search.search({
        account: account.slug,
        sort: 'recent',
        ...(cursor !== undefined && { cursor: cursor.slice(0, 500) }),
      });
      const state = { tags: [], account: account.slug };
      return c.html(accountPage({ reader: reader(c), account, state, ...result }));
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return notFound();
      if (isBadRequest(error))
        return c.html(badRequestPage(reader(c), 'Not a page of this list.'), 400);
      throw error;
    }
  });
}
