import { describe, expect, it } from 'vitest';
import { hetznerDriverForTests } from '../../../../test/hetzner/driver.js';

// Which OS images the hetzner driver can boot: the project's system images, from the stand-in of
// Hetzner Cloud's API (every exchange checked against Hetzner's description).

describe('the hetzner driver’s OS images', () => {
  const setup = hetznerDriverForTests();

  it('are the system images of that name, listed once for many questions', async () => {
    const { driver, standIn } = setup;
    const keys = ['debian-12', 'alma-10', 'ubuntu-20.04'];
    expect([...(await driver.bootableImages(keys))]).toEqual(['debian-12', 'alma-10']);
    const before = standIn.stats.requests;
    expect([...(await driver.bootableImages(['ubuntu-24.04']))]).toEqual(['ubuntu-24.04']);
    expect(standIn.stats.requests).toBe(before);
  });
});
