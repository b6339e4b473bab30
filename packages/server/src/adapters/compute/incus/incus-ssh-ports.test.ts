import { describe, expect, it } from 'vitest';
import { heldPorts } from './incus-network-forward.js';
import { freePort } from './incus-ssh-ports.js';

// The port choice from a forward's hold records: free ports first, then the hold freed longest
// ago; only a range whose every port is in use refuses.

const RANGE = { first: 22000, last: 22003 };
const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-26T12:00:00Z');
const freed = (hoursAgo: number) => new Date(NOW - hoursAgo * HOUR).toISOString();
const holds = (byPort: Record<number, number>) =>
  heldPorts(
    Object.fromEntries(
      Object.entries(byPort).map(([port, hoursAgo]) => [
        `user.svc.ssh-freed.${port}`,
        freed(hoursAgo),
      ]),
    ),
    24 * HOUR,
    NOW,
  );

describe('freePort', () => {
  it('takes a free port before a held one, an expired hold counting as free', () => {
    const held = holds({ 22000: 1, 22001: 30 });
    expect(freePort(RANGE, new Set([22002, 22003]), Number.NaN, held, NOW)).toEqual({
      port: 22001,
    });
  });

  it('gives a VM its own recorded port back, held or not', () => {
    const held = holds({ 22002: 1 });
    expect(freePort(RANGE, new Set(), 22002, held, NOW)).toEqual({ port: 22002 });
  });

  it('hands on the port freed longest ago when no other is left, saying how long it was held', () => {
    const held = holds({ 22000: 1, 22001: 5, 22002: 3, 22003: 9 });
    // 22003 is in use again (recorded by a VM): never handed on.
    expect(freePort(RANGE, new Set([22003]), Number.NaN, held, NOW)).toEqual({
      port: 22001,
      heldMs: 5 * HOUR,
    });
  });

  it('refuses only when every port of the range is in use', () => {
    const used = new Set([22000, 22001, 22002, 22003]);
    expect(() => freePort(RANGE, used, Number.NaN, holds({ 22000: 1 }), NOW)).toThrow(
      /no free SSH port left in INCUS_SSH_PORTS \(22000-22003\): every port is in use/,
    );
  });
});
