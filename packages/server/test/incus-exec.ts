import { execFile } from 'node:child_process';

export interface ExecResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** An exec incus itself failed to carry out: nothing came out, and incus said why on stderr. */
const INCUS_FAILED = /^Error: /m;
const TRIES = 3;

/**
 * Runs `script` with bash as root inside an instance (`incus exec`), as a tenant's root would:
 * the exit code and output, never a throw for a failing command (a test asserts on them).
 * `onStdout` sees the output as it comes, for a script that reports and then keeps running.
 *
 * On a loaded host incus sometimes fails to carry out an exec at all (its own `Error: …` on
 * stderr, no output): such an exec is tried again, up to three times, and said in the test's
 * output. A script's own failure prints something or exits without incus's words, and is not.
 */
export async function incusExec(
  project: string,
  instance: string,
  script: string,
  timeoutMs = 60_000,
  onStdout?: (chunk: string) => void,
): Promise<ExecResult> {
  for (let attempt = 1; ; attempt += 1) {
    const result = await execOnce(project, instance, script, timeoutMs, onStdout);
    const incusFailed =
      result.code !== 0 && result.stdout === '' && INCUS_FAILED.test(result.stderr);
    if (!incusFailed || attempt === TRIES) return result;
    console.warn(`incus exec in ${instance} did not run (try ${attempt}): ${result.stderr.trim()}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
  }
}

function execOnce(
  project: string,
  instance: string,
  script: string,
  timeoutMs: number,
  onStdout?: (chunk: string) => void,
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'incus',
      ['exec', '--project', project, instance, '--', 'bash', '-c', script],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        if (error?.killed) {
          reject(new Error(`incus exec in ${instance} timed out after ${timeoutMs} ms: ${script}`));
          return;
        }
        resolve({ code, stdout, stderr });
      },
    );
    if (onStdout) child.stdout?.on('data', (chunk: Buffer | string) => onStdout(String(chunk)));
  });
}
