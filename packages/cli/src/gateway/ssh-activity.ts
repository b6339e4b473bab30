import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { reportAgentActivity } from '@svc/contract';
import { loadAgentCredentials } from '../agent-env.js';
import { createApiClient } from '../api-client.js';

/**
 * An SSH session's own process, once the person has signed in: OpenSSH names it
 * `sshd: <user>@<tty or notty>` (`sshd-session: …` from OpenSSH 9.8). Connections still signing
 * in (`[preauth]`, `[priv]`) and the listener itself do not match.
 */
const SESSION = /^sshd(?:-session)?: [^\s@]+@(?:pts\/\d+|notty)\b/;

/** How many signed-in SSH sessions the machine has, from the processes' command lines. */
export async function countSshSessions(procDir = '/proc'): Promise<number> {
  const pids = (await readdir(procDir)).filter((name) => /^\d+$/.test(name));
  let sessions = 0;
  for (const pid of pids) {
    // A process may end between the listing and the read: it is no session then.
    const cmdline = await readFile(path.join(procDir, pid, 'cmdline'), 'utf8').catch(() => '');
    if (SESSION.test(cmdline.replace(/\0/g, ' ').trim())) sessions += 1;
  }
  return sessions;
}

/** How often sessions are counted until the service says (and again after it fails to). */
const DEFAULT_EVERY_MS = 60_000;
/** The pace the service may set, at most and at least. */
const MIN_EVERY_MS = 100;
const MAX_EVERY_MS = 10 * 60_000;

/**
 * Tells the service, as often as it asks (`reportEveryMs`), that SSH sessions are open on this
 * machine: the edge never sees them, and they are a person using the Agent (its idle stop). Asked
 * once at the start with whatever is open, to learn the pace; then only while sessions are open.
 * A failed report is dropped: the next one says the same.
 */
export function reportSshActivity(
  env: Readonly<Record<string, string | undefined>>,
  options: { fetch?: typeof fetch; procDir?: string } = {},
): { stop(): void } {
  let everyMs = DEFAULT_EVERY_MS;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let first = true;

  async function round() {
    const sshSessions = await countSshSessions(options.procDir).catch(() => 0);
    if (sshSessions === 0 && !first) return;
    const credentials =
      (await loadAgentCredentials({ HOME: env.HOME })) ?? (await loadAgentCredentials(env));
    if (!credentials) return;
    const call = createApiClient(credentials, options.fetch);
    const asked = (await call(reportAgentActivity, { body: { sshSessions } })).reportEveryMs;
    // Within reason whatever the service says (setTimeout fires at once past 2^31 ms).
    everyMs = Math.min(Math.max(asked, MIN_EVERY_MS), MAX_EVERY_MS);
    first = false;
  }

  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void round()
        .catch(() => {})
        .finally(next);
    }, everyMs);
    timer.unref();
  };
  void round()
    .catch(() => {})
    .finally(next);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
