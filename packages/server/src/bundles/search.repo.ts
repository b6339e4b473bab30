import type { SearchSort } from '@svc/contract';
import { type Expression, type SqlBool, sql } from 'kysely';
import type { Executor } from '../db/database.js';

/**
 * The words of a search as PostgreSQL takes them: `text` goes to `websearch_to_tsquery` (which
 * accepts any text), `prefix` is a lexeme of letters and digits only, matched as `'prefix':*`.
 */
export interface SearchWords {
  readonly text: string;
  readonly prefix?: string;
}

/** Where the previous page ended, in the order's own terms (each a text PostgreSQL casts). */
export type SearchKey =
  | { sort: 'relevance'; rank: string; at: string; id: string }
  | { sort: 'recent'; at: string; id: string }
  | { sort: 'adoptions'; adoptions: number; at: string; id: string };

export interface SearchFilter {
  readonly words?: SearchWords;
  readonly tags: readonly string[];
  readonly accountSlug?: string;
  readonly sort: SearchSort;
  readonly after?: SearchKey;
  readonly limit: number;
}

/** The tsquery of the words: websearch syntax, with the last word also a prefix. */
function tsQuery(words: SearchWords) {
  const web = sql`websearch_to_tsquery('simple', ${words.text})`;
  if (words.prefix === undefined) return web;
  // The operand is quoted and holds letters and digits only: nothing in it is tsquery syntax.
  const prefix = sql`to_tsquery('simple', ${`'${words.prefix}':*`})`;
  return words.text.trim() === '' ? prefix : sql`(${web} && ${prefix})`;
}

/** `at` as exact text (microseconds, UTC), so a cursor compares equal to the row it came from. */
const atKey = sql<string>`to_char(b.last_published_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * One page of published bundles (those with a version) matching the filter, in the order asked,
 * after `after`. Asks for `limit + 1` rows so the caller knows whether another page follows.
 */
export const searchBundles = (db: Executor, filter: SearchFilter) =>
  searchQuery(db, filter).execute();

/** The query `searchBundles` runs, unexecuted (the benchmark prints its plan). */
export function searchQuery(db: Executor, filter: SearchFilter) {
  const query = filter.words && tsQuery(filter.words);
  const rank = query ? sql<number>`ts_rank(b.search_vector, ${query})` : sql<number>`0`;
  let select = db
    .selectFrom('bundles as b')
    .innerJoin('accounts as a', 'a.id', 'b.accountId')
    .select([
      'b.id',
      'b.name',
      'b.displayName',
      'b.description',
      'b.tags',
      'b.latestVersion',
      'b.lastPublishedAt',
      'b.adoptionCount',
      'a.slug as accountSlug',
    ])
    .select([atKey.as('atKey'), sql<string>`${rank}::text`.as('rankKey')])
    .where('b.latestVersion', 'is not', null);
  if (query) select = select.where(sql<SqlBool>`b.search_vector @@ ${query}`);
  if (filter.tags.length > 0)
    select = select.where(sql<SqlBool>`b.tags @> ${JSON.stringify(filter.tags)}::jsonb`);
  if (filter.accountSlug !== undefined) select = select.where('a.slug', '=', filter.accountSlug);
  const after = filter.after;
  if (after) select = select.where(keyset(after, rank));
  // Without words every rank is 0: relevance is recency.
  // Every order ends with the id, so no two rows tie and a keyset never repeats or skips one.
  const ordered =
    filter.sort === 'relevance' && query
      ? select.orderBy(rank, 'desc')
      : filter.sort === 'adoptions'
        ? select.orderBy('b.adoptionCount', 'desc')
        : select;
  return ordered
    .orderBy('b.lastPublishedAt', 'desc')
    .orderBy('b.id', 'desc')
    .limit(filter.limit + 1);
}

/** Rows strictly after the key in the descending order (a row comparison the indexes serve). */
function keyset(key: SearchKey, rank: Expression<number>) {
  const at = sql`${key.at}::timestamptz`;
  const id = sql`${key.id}::uuid`;
  switch (key.sort) {
    case 'relevance':
      return sql<SqlBool>`(${rank}, b.last_published_at, b.id) < (${key.rank}::real, ${at}, ${id})`;
    case 'adoptions':
      return sql<SqlBool>`(b.adoption_count, b.last_published_at, b.id) < (${key.adoptions}::integer, ${at}, ${id})`;
    case 'recent':
      return sql<SqlBool>`(b.last_published_at, b.id) < (${at}, ${id})`;
  }
}

/** After a version is added or deleted: the bundle's newest remaining version and its time. */
export const refreshPublished = (db: Executor, bundleId: string) =>
  db
    .updateTable('bundles')
    .set({
      latestVersion: sql`(select max(version) from bundle_versions where bundle_id = ${bundleId})`,
      lastPublishedAt: sql`(select max(created_at) from bundle_versions where bundle_id = ${bundleId})`,
    })
    .where('id', '=', bundleId)
    .execute();
