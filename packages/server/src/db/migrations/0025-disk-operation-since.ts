import { sql } from 'kysely';
import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  for (const table of ['agents', 'plain_vms']) {
    // When the machine's `disk_operation` began: one whose job died without ending it is given up
    // by the reconciler once it is older than the jobs can take with their retries.
    await db.schema.alterTable(table).addColumn('disk_operation_at', 'timestamptz').execute();
    // An operation in flight now is counted from now, so the reconciler reaches it too.
    await sql`update ${sql.table(table)} set disk_operation_at = now()
      where disk_operation is not null`.execute(db);
  }
}

export async function down(db: AnyKysely): Promise<void> {
  for (const table of ['agents', 'plain_vms']) {
    await db.schema.alterTable(table).dropColumn('disk_operation_at').execute();
  }
}
