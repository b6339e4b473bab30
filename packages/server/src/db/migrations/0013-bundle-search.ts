import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // What search and the public lists show, kept on the bundle row so a page of results is one
  // index scan: the newest remaining version and when it was published (null: nothing public),
  // refreshed in the transaction that adds or deletes a version.
  await db.schema
    .alterTable('bundles')
    .addColumn('latest_version', 'integer')
    .addColumn('last_published_at', 'timestamptz')
    // Counted by adoption (later); search sorts by it.
    .addColumn('adoption_count', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await sql`
    update bundles b set latest_version = v.latest, last_published_at = v.at
    from (
      select bundle_id, max(version) as latest, max(created_at) as at
      from bundle_versions group by bundle_id
    ) v
    where v.bundle_id = b.id`.execute(db);

  // A generated column: PostgreSQL computes it on every write of the row, identically on PGlite.
  // `simple` neither stems nor drops stop words, so names and tags match as written; the weights
  // rank a hit in the name above one in the tags above one in the description.
  await sql`
    alter table bundles add column search_vector tsvector generated always as (
      setweight(to_tsvector('simple'::regconfig, name), 'A') ||
      setweight(to_tsvector('simple'::regconfig, display_name), 'A') ||
      setweight(jsonb_to_tsvector('simple'::regconfig, tags, '["string"]'), 'B') ||
      setweight(to_tsvector('simple'::regconfig, description), 'C')
    ) stored`.execute(db);
  // Without `fastupdate` every write goes into the index at once: publishes are rare, and PGlite
  // has no autovacuum to merge a pending list that every search would otherwise scan.
  await sql`
    create index bundles_search_idx on bundles using gin (search_vector)
    with (fastupdate = off)`.execute(db);
  // `tag=` is containment (`tags @> '["a","b"]'`).
  await sql`
    create index bundles_tags_idx on bundles using gin (tags jsonb_path_ops)
    with (fastupdate = off)`.execute(db);
  // The two orders a search without words pages through, public bundles only.
  await sql`
    create index bundles_recent_idx on bundles (last_published_at desc, id desc)
    where latest_version is not null`.execute(db);
  await sql`
    create index bundles_adoptions_idx on bundles (adoption_count desc, last_published_at desc, id desc)
    where latest_version is not null`.execute(db);
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropIndex('bundles_adoptions_idx').execute();
  await db.schema.dropIndex('bundles_recent_idx').execute();
  await db.schema.dropIndex('bundles_tags_idx').execute();
  await db.schema.dropIndex('bundles_search_idx').execute();
  await db.schema
    .alterTable('bundles')
    .dropColumn('search_vector')
    .dropColumn('adoption_count')
    .dropColumn('last_published_at')
    .dropColumn('latest_version')
    .execute();
}
