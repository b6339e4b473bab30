import { execFile } from 'node:child_process';

export interface ExecResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `script` with bash as root inside an instance (`incus exec`), as a tenant's root would:
 * the exit code and output, never a throw for a failing command (a test asserts on them).
 * `onStdout` sees the output as it comes, for a script that reports and then keeps running.
 */
export function incusExec(
  project: string,
  instance: string,
  script: string,
  timeoutMs = 60_000,
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
