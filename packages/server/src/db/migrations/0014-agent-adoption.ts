import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // An Agent adopted from a bundle: the version its home is unpacked from (nulled when the
  // version is deleted, which fails a provisioning still waiting for it), what it says it came
  // from (kept after that), the credentials the adopter gave (sealed; removed once provisioning
  // ends) and the credential keys the adopter left to set.
  await db.schema
    .alterTable('agents')
    .addColumn('adopted_version_id', 'uuid', (c) =>
      c.references('bundle_versions.id').onDelete('set null'),
    )
    .addColumn('adopted_from', 'jsonb')
    .addColumn('adoption_credentials', 'text')
    .addColumn('credentials_to_set', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
  await db.schema
    .createIndex('agents_adopted_version_idx')
    .on('agents')
    .column('adopted_version_id')
    .where(sql.ref('adopted_version_id'), 'is not', null)
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema.dropIndex('agents_adopted_version_idx').execute();
  await db.schema
    .alterTable('agents')
    .dropColumn('adopted_version_id')
    .dropColumn('adopted_from')
    .dropColumn('adoption_credentials')
    .dropColumn('credentials_to_set')
    .execute();
}
