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

/**
 * The query `searchBundles` runs, unexecuted (the benchmark prints its plan). A common word or a
 * short prefix matches thousands of bundles, all ranked for one page: the inner query sorts only
 * their ids and keys, with `ts_rank` computed once a row, so that the join, the formatted keys and
 * the wide columns cost the page's `limit + 1` rows alone.
 */
export function searchQuery(db: Executor, filter: SearchFilter) {
  const query = filter.words && tsQuery(filter.words);
  const rank = query ? sql<number>`ts_rank(b.search_vector, ${query})` : sql<number>`0`;
  let keys = db
    .selectFrom('bundles as b')
    .select(['b.id', rank.as('rank')])
    .where('b.latestVersion', 'is not', null);
  if (query) keys = keys.where(sql<SqlBool>`b.search_vector @@ ${query}`);
  if (filter.tags.length > 0)
    keys = keys.where(sql<SqlBool>`b.tags @> ${JSON.stringify(filter.tags)}::jsonb`);
  const slug = filter.accountSlug;
  if (slug !== undefined)
    keys = keys.where('b.accountId', '=', (eb) =>
      eb.selectFrom('accounts').select('id').where('slug', '=', slug),
    );
  if (filter.after) keys = keys.where(keyset(filter.after, rank));
  const top = keys
    .orderBy(order(filter.sort, query && rank))
    .limit(filter.limit + 1)
    .as('top');
  const page = db
    .selectFrom(top)
    .innerJoin('bundles as b', 'b.id', 'top.id')
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
    .select([atKey.as('atKey'), sql<string>`top.rank::text`.as('rankKey')]);
  return page.orderBy(order(filter.sort, query && sql<number>`top.rank`));
}

/**
 * The order asked, over `b`, every key descending. Without words every rank is 0: relevance is
 * recency. Every order ends with the id, so no two rows tie and a keyset never repeats or skips
 * one.
 */
function order(sort: SearchSort, rank: Expression<number> | undefined) {
  const first =
    sort === 'relevance' && rank ? [rank] : sort === 'adoptions' ? [sql`b.adoption_count`] : [];
  return sql.join([...first, sql`b.last_published_at`, sql`b.id`].map((key) => sql`${key} desc`));
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

/**
 * The account behind a public page: an organization, or a personal account that has published
 * (a bundle with a version); nothing for any other.
 */
export const findPublicAccount = (db: Executor, slug: string) =>
  db
    .selectFrom('accounts as a')
    .select(['a.slug', 'a.name'])
    .where('a.slug', '=', slug)
    .where((eb) =>
      eb.or([
        eb('a.kind', '=', 'organization'),
        eb.exists(
          eb
            .selectFrom('bundles as b')
            .select('b.id')
            .whereRef('b.accountId', '=', 'a.id')
            .where('b.latestVersion', 'is not', null),
        ),
      ]),
    )
    .executeTakeFirst();
