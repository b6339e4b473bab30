import type { TokenCipher } from '../crypto/token-cipher.js';
import type { Database } from '../db/database.js';
import * as repo from './app-connections.repo.js';

/**
 * The operator's key rotation step: opens every stored token with whichever configured key sealed
 * it and seals it again with the primary key. Each row is written with a guard on the envelopes
 * it read, so a refresh racing with it wins and the row is simply counted as changed.
 */
export async function reencryptTokens(database: Database, cipher: TokenCipher) {
  let resealed = 0;
  let skipped = 0;
  const rows = await repo.listSealedTokens(database.db);
  for (const row of rows) {
    if (
      !cipher.needsResealing(row.accessToken) &&
      (row.refreshToken === null || !cipher.needsResealing(row.refreshToken))
    ) {
      continue;
    }
    const binding = { connectionId: row.id, provider: row.provider };
    const reseal = (envelope: string) => cipher.seal(cipher.open(envelope, binding), binding);
    const result = await repo.replaceSealedTokens(database.db, row, {
      accessToken: reseal(row.accessToken),
      refreshToken: row.refreshToken === null ? null : reseal(row.refreshToken),
    });
    if (Number(result.numUpdatedRows) > 0) resealed += 1;
    else skipped += 1;
  }
  return { connections: rows.length, resealed, changedMeanwhile: skipped };
}
