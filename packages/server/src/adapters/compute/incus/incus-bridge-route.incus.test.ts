import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { requireIncus } from '../../../../test/incus.js';

const run = promisify(execFile);

// Each change of the bridge's ACL list has Incus take the bridge's address off for a moment; the
// host then has no route to the machines' subnet but the default one, out of this host.
// `incus:setup` leaves a fallback that keeps that traffic here: an unreachable route of the lowest
// priority for the subnet, which the bridge's own route outranks whenever it is there.
describe("the bridge's subnet never routed away from the host", () => {
  it('has an unreachable route of the lowest priority beside the bridge’s own', async () => {
    requireIncus();
    const routes = (await run('ip', ['-4', 'route', 'show'])).stdout.split('\n');
    const own = routes.find((line) => / dev incusbr0 proto kernel scope link /.test(line));
    const subnet = own?.split(' ')[0];
    expect(subnet).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    expect(routes).toContain(`unreachable ${subnet} metric 4294967295 `);
    // With the bridge's route in place, a machine's address still goes by the bridge.
    const host = subnet?.replace(/\.0\/\d+$/, '.2') as string;
    expect((await run('ip', ['route', 'get', host])).stdout).toContain('dev incusbr0');
  });
});
