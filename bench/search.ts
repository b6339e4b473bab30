import type { SearchQuery } from '@svc/contract';
import { CompiledQuery, sql } from 'kysely';
import { searchQuery } from '../packages/server/src/bundles/search.repo.js';
import { searchWords } from '../packages/server/src/bundles/search.service.js';
import { withServedApp } from './served-app.js';

/**
 * Search over 100,000 published bundles (seeded by SQL, on PGlite unless `DATABASE_URL` is set):
 * 200 mixed searches (words, prefixes, tags, an account's list) through the search service,
 * against the same columns fetched by primary key in the same run. Target: p95 under 50 ms.
 */
const BUNDLES = Number(process.env.BENCH_BUNDLES ?? 100_000);
const ACCOUNTS = 1000;
const SEARCHES = 200;

const WORDS = `weather station garden helper notes sky cloud rain sensor home assistant music
playlist calendar mail inbox summary daily digest research paper reader writer blog recipe
kitchen budget finance invoice tracker fitness running coach language tutor translate code
review deploy monitor alert server backup photo album travel planner flight hotel news feed
podcast video editor chess puzzle game story poet lyrics design sketch diagram map route bike
plant water soil solar energy battery car repair shop store order shipping support ticket chat
friend family school homework math science history quiz flash cards memory journal diary mood
sleep health doctor pet dog cat bird fish farm market stock crypto wallet tax legal contract
meeting agenda minutes slides report spreadsheet data chart dashboard analytics search index
crawler scraper bot agent workflow automation email reply schedule reminder todo habit goal`
  .split(/\s+/)
  .filter(Boolean);
const TAGS = `weather iot notes productivity music finance health education games travel
writing code devops data home garden food fitness research social`
  .split(/\s+/)
  .filter(Boolean);

/** A small deterministic generator: the same searches every run. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state % n;
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function timed(runs: readonly (() => Promise<unknown>)[]) {
  const ms: number[] = [];
  for (const run of runs) {
    const started = performance.now();
    await run();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

export async function run(): Promise<void> {
  await withServedApp({ work: false }, async ({ ctx }) => {
    const db = ctx.database.db;
    const seeded = performance.now();
    await sql`
      insert into accounts (id, slug, kind, name)
      select gen_random_uuid(), 'bench-' || g, 'organization', 'Bench ' || g
      from generate_series(1, ${ACCOUNTS}) g`.execute(db);
    const word = (expr: string) => `w.a[1 + abs(hashint4(${expr})) % ${WORDS.length}]`;
    await sql`
      with w as (select ${WORDS}::text[] as a),
           t as (select ${TAGS}::text[] as a),
           acc as (select array_agg(id order by slug) as ids from accounts where slug like 'bench-%')
      insert into bundles (id, account_id, name, display_name, description, tags, credentials,
                           last_version, latest_version, last_published_at, adoption_count)
      select gen_random_uuid(), acc.ids[1 + g % ${ACCOUNTS}],
        ${sql.raw(word('g * 3'))} || '-' || ${sql.raw(word('g * 3 + 1'))} || '-' || g,
        initcap(${sql.raw(word('g * 3'))} || ' ' || ${sql.raw(word('g * 3 + 1'))}),
        array_to_string(array(
          select ${sql.raw(word('g * 16 + k'))} from generate_series(1, 6 + g % 10) k
        ), ' ') || '.',
        jsonb_build_array(
          t.a[1 + abs(hashint4(g * 5)) % ${TAGS.length}],
          t.a[1 + abs(hashint4(g * 5 + 1)) % ${TAGS.length}]),
        '[]'::jsonb, 1, 1,
        now() - g * interval '37 seconds',
        abs(hashint4(g * 7)) % 500
      from generate_series(1, ${BUNDLES}) g, w, t, acc`.execute(db);
    await sql`
      insert into bundle_versions (id, bundle_id, version, manifest, tarball_sha256, tarball_size,
                                   file_count, total_bytes, agent_id, created_at)
      select gen_random_uuid(), id, 1, '{}'::jsonb, md5(id::text) || md5(name), 1000, 3, 2000,
             gen_random_uuid(), last_published_at
      from bundles`.execute(db);
    await sql`analyze`.execute(db);
    const seedMs = performance.now() - seeded;

    const pick = random(16);
    const w = () => WORDS[pick(WORDS.length)] as string;
    const queries: SearchQuery[] = [];
    for (let i = 0; i < SEARCHES; i++) {
      const kind = i % 5;
      if (kind === 0) queries.push({ q: w() });
      else if (kind === 1) queries.push({ q: `${w()} ${w()}` });
      else if (kind === 2) queries.push({ q: w().slice(0, 2 + pick(3)) });
      else if (kind === 3)
        queries.push({ q: `${w()} ${w().slice(0, 3)}`, tag: TAGS[pick(TAGS.length)] });
      else
        queries.push({
          tag: TAGS[pick(TAGS.length)] as string,
          ...(i % 2 ? { sort: 'adoptions' as const } : { account: `bench-${1 + pick(ACCOUNTS)}` }),
        });
    }
    const ids = (
      await sql<{ id: string }>`select id from bundles order by random() limit ${SEARCHES}`.execute(
        db,
      )
    ).rows.map((r) => r.id);
    const byKey = ids.map(
      (id) => () =>
        db
          .selectFrom('bundles as b')
          .innerJoin('accounts as a', 'a.id', 'b.accountId')
          .select(['b.id', 'b.name', 'b.displayName', 'b.description', 'b.tags', 'b.latestVersion'])
          .select(['b.lastPublishedAt', 'b.adoptionCount', 'a.slug'])
          .where('b.id', '=', id)
          .execute(),
    );
    const searches = queries.map((q) => () => ctx.bundles.search.search(q));
    // Warm-up: the first calls pay for loading pages and planning.
    await timed([...byKey.slice(0, 20), ...searches.slice(0, 20)]);
    const baseline = await timed(byKey);
    const search = await timed(searches);
    const kinds = [
      'one word',
      'two words',
      'a 2-4 letter prefix',
      'words, prefix and tag',
      'tag only',
    ];
    const byKind: { kind: string; p50: number; p95: number }[] = [];
    for (const [k, kind] of kinds.entries())
      byKind.push({ kind, ...(await timed(searches.filter((_, i) => i % 5 === k))) });

    const words = searchWords('garden hel');
    if (!words) throw new Error('no words');
    const compiled = searchQuery(db, { words, tags: [], sort: 'relevance', limit: 20 }).compile();
    const plan = await db.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
    );

    const f = (ms: number) => ms.toFixed(2).padStart(7);
    console.log(
      `database: ${ctx.config.database.kind}, ${BUNDLES} published bundles, ${ACCOUNTS} accounts (seeded in ${(seedMs / 1000).toFixed(1)} s)`,
    );
    console.log(
      `primary-key lookup (baseline)   p50 ${f(baseline.p50)} ms   p95 ${f(baseline.p95)} ms   (${SEARCHES} lookups)`,
    );
    console.log(
      `search (words, prefixes, tags)  p50 ${f(search.p50)} ms   p95 ${f(search.p95)} ms   (${SEARCHES} searches)`,
    );
    for (const k of byKind)
      console.log(
        `  ${k.kind.padEnd(30)} p50 ${f(k.p50)} ms   p95 ${f(k.p95)} ms   (again, by kind)`,
      );
    console.log(
      `ratio search : baseline = ${(search.p95 / baseline.p95).toFixed(1)} at p95 (target: search p95 < 50 ms)`,
    );
    console.log(`\nEXPLAIN of q='garden hel' (garden & hel:*), relevance:`);
    for (const row of plan.rows) console.log(`  ${row['QUERY PLAN']}`);
  });
}
