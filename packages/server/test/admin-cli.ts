import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { TEST_ENV } from './test-context.js';
import { parentEnv } from './test-db.js';

const run = promisify(execFile);
/** What `npm run admin` runs: the launcher, which builds dist/admin when the sources changed. */
export const ADMIN_LAUNCHER = path.join(import.meta.dirname, '../bin/admin.mjs');

/** The real operator CLI, as `npm run admin -- …` runs it (in `cwd`, by default this one). */
export const admin = (env: Record<string, string>, ...args: string[]) =>
  adminIn(process.cwd(), env, ...args);

/** `env` adds to the test's environment; a variable given as `undefined` is left out. */
export const adminIn = (
  cwd: string,
  env: Record<string, string | undefined>,
  ...args: string[]
) => {
  const merged = { ...parentEnv(), ...TEST_ENV, LOG_LEVEL: 'silent', ...env };
  return run(process.execPath, [ADMIN_LAUNCHER, ...args], {
    cwd,
    env: Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined)),
  });
};
