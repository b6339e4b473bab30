import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allEndpoints } from './index.js';
import { ENDPOINT_ACCESS, roleAtLeast } from './roles.js';

const page = readFileSync(path.join(import.meta.dirname, '../../../docs/roles.md'), 'utf8');

/** The page's table rows: method, path, who may, rule. */
const rows = page
  .split('\n')
  .map((line) => /^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| `(\w+)` \|(.*)\|$/.exec(line))
  .filter((match) => match !== null)
  .map(([, method, endpointPath, access, rule]) => ({ method, endpointPath, access, rule }));

describe('docs/roles.md', () => {
  it('lists every endpoint once, with the access the table gives it', () => {
    const listed = rows.map((r) => `${r.method} ${r.endpointPath} ${r.access}`).sort();
    const table = allEndpoints
      .map((e) => `${e.method} ${e.path} ${ENDPOINT_ACCESS[e.id]?.access}`)
      .sort();
    expect(listed).toEqual(table);
  });

  it('says which endpoints are for organizations only, and which never take a token', () => {
    for (const endpoint of allEndpoints) {
      const row = rows.find(
        (r) => r.method === endpoint.method && r.endpointPath === endpoint.path,
      );
      const rule = row?.rule ?? '';
      const label = `${endpoint.method} ${endpoint.path}`;
      expect(rule.includes('organizations only'), label).toBe(
        ENDPOINT_ACCESS[endpoint.id]?.organizationOnly === true,
      );
      expect(rule.includes('browser session only'), label).toBe(endpoint.auth === 'session-only');
    }
  });
});

describe('roleAtLeast', () => {
  it('orders owner over admin over member', () => {
    expect(roleAtLeast('owner', 'admin')).toBe(true);
    expect(roleAtLeast('admin', 'admin')).toBe(true);
    expect(roleAtLeast('member', 'admin')).toBe(false);
    expect(roleAtLeast('admin', 'owner')).toBe(false);
    expect(roleAtLeast('member', 'member')).toBe(true);
  });
});
