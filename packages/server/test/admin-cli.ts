import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { TEST_ENV } from './test-context.js';
import { parentEnv } from './test-db.js';

const run = promisify(execFile);
const entry = path.join(import.meta.dirname, '../src/admin/main.ts');

/** The real operator CLI, as `npm run admin -- …` runs it. */
export const admin = (env: Record<string, string>, ...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', entry, ...args], {
    env: { ...parentEnv(), ...TEST_ENV, LOG_LEVEL: 'silent', ...env },
  });
