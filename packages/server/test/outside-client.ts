import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A stand-in for "the internet": a network namespace joined to the host by a veth pair. */
export interface OutsideClient {
  /** The namespace's name, for `ip netns exec`. */
  readonly netns: string;
  /** The host's end of the pair: the address outside clients reach the host at. */
  readonly hostAddress: string;
  /** The client's own address, inside the namespace. */
  readonly clientAddress: string;
  /** Deletes the namespace and the pair (safe to call twice, and after a failed setup). */
  remove(): Promise<void>;
}

/**
 * Makes an outside client on a /30 of 172.31.254.0/24 that no interface of the host uses yet.
 * The namespace has no default route: it reaches only the host's end of the pair, as a real
 * client reaches only the host's public address (with a route through the host it could reach
 * the bridge directly, and a test would pass for the wrong reason). Needs root.
 */
export async function createOutsideClient(): Promise<OutsideClient> {
  const tag = randomBytes(3).toString('hex');
  const netns = `svc-out-${tag}`;
  const hostEnd = `svoh${tag}`;
  const clientEnd = `svoc${tag}`;
  const taken = (await run('ip', ['-4', '-o', 'addr', 'show'])).stdout;
  let base = 0;
  for (let attempt = 0; ; attempt++) {
    base = randomInt(0, 64) * 4;
    if (!taken.includes(`172.31.254.${base + 1}/`)) break;
    if (attempt > 100) throw new Error('no free /30 left in 172.31.254.0/24 for an outside client');
  }
  const hostAddress = `172.31.254.${base + 1}`;
  const clientAddress = `172.31.254.${base + 2}`;
  const remove = async () => {
    // An Incus forward on the address outlives its last entry while it holds freed ports back
    // (INCUS_SSH_PORT_HOLD_HOURS): gone with the address, so a later test given it starts clean.
    await run('incus', ['network', 'forward', 'delete', 'incusbr0', hostAddress]).catch(() => {});
    await run('ip', ['link', 'delete', hostEnd]).catch(() => {});
    await run('ip', ['netns', 'delete', netns]).catch(() => {});
  };
  try {
    for (const args of [
      ['netns', 'add', netns],
      ['link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', clientEnd],
      ['link', 'set', clientEnd, 'netns', netns],
      ['addr', 'add', `${hostAddress}/30`, 'dev', hostEnd],
      ['link', 'set', hostEnd, 'up'],
      ['-n', netns, 'addr', 'add', `${clientAddress}/30`, 'dev', clientEnd],
      ['-n', netns, 'link', 'set', clientEnd, 'up'],
      ['-n', netns, 'link', 'set', 'lo', 'up'],
    ]) {
      await run('ip', args);
    }
  } catch (error) {
    await remove();
    throw new Error(`cannot make an outside client (ip netns needs root): ${error}`);
  }
  return { netns, hostAddress, clientAddress, remove };
}
