import { execFileSync, spawnSync } from 'node:child_process';

/**
 * Runs Prometheus's `promtool` (Debian's `prometheus` package) with `args`, `input` on its
 * standard input; returns its exit status and what it printed. Throws when promtool is not
 * installed: the checks it makes must never be skipped quietly.
 */
export function promtool(args: string[], input = ''): { status: number; output: string } {
  try {
    execFileSync('sh', ['-c', 'command -v promtool'], { stdio: 'ignore' });
  } catch {
    throw new Error('promtool is not installed: apt-get install -y prometheus (see .ci/run)');
  }
  const run = spawnSync('promtool', args, { input, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status ?? -1, output: `${run.stdout}${run.stderr}` };
}
