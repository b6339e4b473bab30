import { describe, expect, it } from 'vitest';
import { refreshAcrossProcesses } from '../../test/apps-two-processes.js';
import { databaseKinds, testDatabaseUrl } from '../../test/test-db.js';

// Two real processes need a database they can both open: PostgreSQL only (PGlite is one
// process's): without TEST_DATABASE_URL it fails, saying so, rather than skip.
if (!databaseKinds.includes('postgres')) {
  it('needs TEST_DATABASE_URL (PostgreSQL): two processes cannot share PGlite', () => {
    throw new Error('TEST_DATABASE_URL is unset: two service processes on PostgreSQL did not run');
  });
}

if (databaseKinds.includes('postgres'))
  describe('two service processes on PostgreSQL', () => {
    it('50 concurrent token requests split between them: one refresh at a rotating provider', async () => {
      const result = await refreshAcrossProcesses(testDatabaseUrl('postgres'), 50);
      expect(result.statuses).toEqual(Array(50).fill(200));
      expect(result.tokens.size).toBe(1);
      expect(result.providerCalls).toBe(1);
    }, 120_000);

    it('the same with 60-second tokens: one refresh, one token for all', async () => {
      const result = await refreshAcrossProcesses(testDatabaseUrl('postgres'), 50, {
        accessTokenTtlSeconds: 60,
      });
      expect(result.statuses).toEqual(Array(50).fill(200));
      expect(result.tokens.size).toBe(1);
      expect(result.providerCalls).toBe(1);
    }, 120_000);
  });
