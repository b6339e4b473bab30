import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  await db.schema
    .createTable('bundles')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('account_id', 'uuid', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('display_name', 'text', (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull())
    .addColumn('tags', 'jsonb', (col) => col.notNull())
    .addColumn('credentials', 'jsonb', (col) => col.notNull())
    // The last number handed out: versions take it + 1 at complete, deleted numbers stay used.
    .addColumn('last_version', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('bundles_account_name_key', ['account_id', 'name'])
    .execute();

  await db.schema
    .createTable('bundle_stagings')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    // A destroyed Agent's row is deleted; its stagings go with it.
    .addColumn('agent_id', 'uuid', (col) =>
      col.notNull().references('agents.id').onDelete('cascade'),
    )
    .addColumn('account_id', 'uuid', (col) => col.notNull().references('accounts.id'))
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('manifest', 'jsonb', (col) => col.notNull())
    .addColumn('report', 'jsonb', (col) => col.notNull())
    .addColumn('bundle_id', 'uuid', (col) => col.references('bundles.id').onDelete('set null'))
    // What `publish` declared: the manifest, files and tarball `complete` verifies.
    .addColumn('publish', 'jsonb')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // One open staging per Agent (docs/reference.md#bundles).
  await db.schema
    .createIndex('bundle_stagings_open_idx')
    .on('bundle_stagings')
    .column('agent_id')
    .unique()
    .where(sql.ref('state'), 'in', sql`('staged', 'publishing')`)
    .execute();

  await db.schema
    .createTable('bundle_uploads')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('staging_id', 'uuid', (col) =>
      col.notNull().references('bundle_stagings.id').onDelete('cascade'),
    )
    .addColumn('sha256', 'text', (col) => col.notNull())
    .addColumn('size', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('bundle_uploads_staging_idx')
    .on('bundle_uploads')
    .column('staging_id')
    .execute();

  await db.schema
    .createTable('bundle_versions')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('bundle_id', 'uuid', (col) =>
      col.notNull().references('bundles.id').onDelete('cascade'),
    )
    .addColumn('version', 'integer', (col) => col.notNull())
    .addColumn('manifest', 'jsonb', (col) => col.notNull())
    .addColumn('tarball_sha256', 'text', (col) => col.notNull())
    .addColumn('tarball_size', 'bigint', (col) => col.notNull())
    .addColumn('file_count', 'integer', (col) => col.notNull())
    .addColumn('total_bytes', 'bigint', (col) => col.notNull())
    .addColumn('readme_sha256', 'text')
    .addColumn('agent_id', 'uuid', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('bundle_versions_bundle_version_key', ['bundle_id', 'version'])
    .execute();
  await db.schema
    .createIndex('bundle_versions_tarball_idx')
    .on('bundle_versions')
    .column('tarball_sha256')
    .execute();

  await db.schema
    .createTable('bundle_files')
    .addColumn('version_id', 'uuid', (col) =>
      col.notNull().references('bundle_versions.id').onDelete('cascade'),
    )
    .addColumn('path', 'text', (col) => col.notNull())
    .addColumn('sha256', 'text', (col) => col.notNull())
    .addColumn('size', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('bundle_files_pkey', ['version_id', 'path'])
    .execute();
  // Deleting a version asks whether any other version still uses an object.
  await db.schema
    .createIndex('bundle_files_sha256_idx')
    .on('bundle_files')
    .column('sha256')
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropTable('bundle_files').execute();
  await db.schema.dropTable('bundle_versions').execute();
  await db.schema.dropTable('bundle_uploads').execute();
  await db.schema.dropTable('bundle_stagings').execute();
  await db.schema.dropTable('bundles').execute();
}
