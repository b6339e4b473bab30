import type { BundleCard, SearchQuery, SearchResult, SearchSort } from '@svc/contract';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { isCount, isIsoInstant, isRealText, isUuid } from '../util/cursor-values.js';
import { bundleUrl } from './bundle-views.js';
import * as repo from './search.repo.js';

const DEFAULT_LIMIT = 20;

/**
 * The search's words as PostgreSQL takes them. The last word, while it is still being typed,
 * also matches as a prefix (`glam` finds `glamp`), unless it is websearch syntax: inside an
 * open quote, or `-word`. Only letters and digits reach `to_tsquery`, quoted.
 */
export function searchWords(q: string | undefined): repo.SearchWords | undefined {
  const text = q?.trim() ?? '';
  if (text === '') return undefined;
  const last = /(?:^|\s)([\p{L}\p{N}]{1,100})$/u.exec(text);
  const openQuote = (text.match(/"/g) ?? []).length % 2 === 1;
  if (!last?.[1] || openQuote) return { text };
  return { text: text.slice(0, last.index).trim(), prefix: last[1] };
}

/** The search writes its instants with microseconds (`atKey`). */
const MICROSECONDS = /\.\d{6}Z$/;

type Row = Awaited<ReturnType<typeof repo.searchBundles>>[number];

/** The opaque cursor: the order and the last row's key, as base64url JSON. */
export function encodeCursor(sort: SearchSort, row: Row): string {
  const key =
    sort === 'relevance'
      ? [sort, row.rankKey, row.atKey, row.id]
      : sort === 'adoptions'
        ? [sort, row.adoptionCount, row.atKey, row.id]
        : [sort, row.atKey, row.id];
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/**
 * The key of a cursor made for this order; anything else is a 400 naming `cursor`, values
 * included: each must be one its SQL cast takes (a real instant, a `real`, an `integer`).
 */
export function decodeCursor(cursor: string, sort: SearchSort): repo.SearchKey {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  const valid = (at: unknown, id: unknown) =>
    isIsoInstant(at) && MICROSECONDS.test(at) && isUuid(id);
  if (Array.isArray(key) && key[0] === sort) {
    const [, a, b, c] = key;
    if (sort === 'recent' && key.length === 3 && valid(a, b))
      return { sort, at: a as string, id: b as string };
    if (sort === 'relevance' && key.length === 4 && isRealText(a) && valid(b, c))
      return { sort, rank: a, at: b as string, id: c as string };
    if (sort === 'adoptions' && key.length === 4 && isCount(a) && valid(b, c))
      return { sort, adoptions: a, at: b as string, id: c as string };
  }
  throw new AppError('invalid_request', {
    message: 'The cursor does not belong to this search',
    issues: [
      {
        path: ['query', 'cursor'],
        message: 'Pass the nextCursor of the previous page, with the same sort',
        code: 'invalid_cursor',
      },
    ],
  });
}

/** Search and the public lists: published bundles as cards, a page at a time. */
export function createSearchService(deps: { database: Database; publicUrl: string }) {
  const db = deps.database.db;

  const toCard = (row: Row): BundleCard => ({
    accountSlug: row.accountSlug,
    name: row.name,
    displayName: row.displayName,
    description: row.description,
    tags: row.tags,
    latestVersion: row.latestVersion ?? 0,
    lastPublishedAt: (row.lastPublishedAt ?? new Date(0)).toISOString(),
    adoptions: row.adoptionCount,
    url: bundleUrl(deps.publicUrl, row.accountSlug, row.name),
  });

  return {
    async search(query: SearchQuery): Promise<SearchResult> {
      const words = searchWords(query.q);
      const sort = query.sort ?? (words ? 'relevance' : 'recent');
      const limit = query.limit ?? DEFAULT_LIMIT;
      const tags = query.tag === undefined ? [] : [query.tag].flat();
      const rows = await repo.searchBundles(db, {
        ...(words && { words }),
        tags: [...new Set(tags)],
        ...(query.account !== undefined && { accountSlug: query.account }),
        sort,
        ...(query.cursor !== undefined && { after: decodeCursor(query.cursor, sort) }),
        limit,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map(toCard),
        nextCursor: rows.length > limit && last ? encodeCursor(sort, last) : null,
      };
    },

    /**
     * An account's public face: its slug and name. `not_found` when there is no such account,
     * and for a personal account with nothing published: its slug comes from its owner's e-mail
     * and its name is theirs, so a page for every user would tell who has an account.
     */
    async findAccount(slug: string) {
      const account = await repo.findPublicAccount(db, slug);
      if (!account) throw new AppError('not_found');
      return account;
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
