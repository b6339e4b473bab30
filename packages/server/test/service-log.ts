import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { TEST_ENV } from './test-context.js';
import { parentEnv } from './test-db.js';

const MAIN = path.join(import.meta.dirname, '../src/main.ts');

/** One line the service logged (pino's JSON: `msg`, `level`, `time` and the line's own fields). */
export type LogLine = Readonly<Record<string, unknown>> & { readonly msg?: string };

/**
 * The real service in its own process, as `npm start` runs it (like `startService`), its log
 * read as it comes: each JSON line of stdout goes to `onLine` (at the LOG_LEVEL `env` names,
 * info by default), so a caller can time what the service says it did. Its stderr is passed on.
 */
export function startServiceWithLog(
  env: Record<string, string>,
  onLine: (line: LogLine) => void,
): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...parentEnv(), ...TEST_ENV, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: child.stdout }).on('line', (text) => {
    try {
      onLine(JSON.parse(text) as LogLine);
    } catch {
      // Not a log line (something printed plainly): nothing to time.
    }
  });
  return child;
}
