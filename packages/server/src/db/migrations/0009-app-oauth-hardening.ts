import type { AnyKysely } from '../migrate.js';

// Frozen: never edit a migration that has shipped; add the next one instead.

export async function up(db: AnyKysely): Promise<void> {
  // States live 10 minutes; those of flows under way cannot be bound to their browser any more,
  // so they go (their callbacks fail, and the user starts again).
  await db.deleteFrom('app_authorization_states').execute();
  // SHA-256 of the value of the cookie `authorize` set in the browser (browser-binding.ts).
  await db.schema
    .alterTable('app_authorization_states')
    .addColumn('browser_binding_hash', 'text', (col) => col.notNull())
    .execute();
  // The access token's lifetime (`expires_in`), for the cache rule (connection-tokens.ts).
  // Unknown (null) for rows stored before: they keep the plain 5-minute rule until refreshed.
  await db.schema
    .alterTable('app_connections')
    .addColumn('access_token_lifetime_seconds', 'integer')
    .execute();
}

export async function down(db: AnyKysely): Promise<void> {
  await db.schema
    .alterTable('app_connections')
    .dropColumn('access_token_lifetime_seconds')
    .execute();
  await db.schema
    .alterTable('app_authorization_states')
    .dropColumn('browser_binding_hash')
    .execute();
}
