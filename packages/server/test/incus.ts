import { existsSync } from 'node:fs';
import { testEnv } from './test-db.js';

/** The Incus daemon the `*.incus.test.ts` files use. */
export const INCUS_SOCKET = testEnv.INCUS_SOCKET ?? '/var/lib/incus/unix.socket';

/** These tests need a real daemon: without one they fail, never skip. */
export function requireIncus(): void {
  if (!existsSync(INCUS_SOCKET)) {
    throw new Error(
      `no Incus socket at ${INCUS_SOCKET}: these tests need Incus (npm run incus:setup)`,
    );
  }
}
