import { describe, expect, it } from 'vitest';
import { refreshAcrossProcesses } from '../../test/apps-two-processes.js';
import { databaseKinds, testDatabaseUrl } from '../../test/test-db.js';

// Two real processes need a database they can both open: PostgreSQL only (PGlite is one
// process's). Runs when TEST_DATABASE_URL is set, as in CI.
describe.skipIf(!databaseKinds.includes('postgres'))('two service processes on PostgreSQL', () => {
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
