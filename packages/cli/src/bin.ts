import { createInterface } from 'node:readline/promises';
import { run } from './main.js';

/** `svc` as a process: the real terminal, environment and exit code. */
export async function runAsProcess(): Promise<void> {
  const interactive = process.stdin.isTTY === true;
  process.exitCode = await run(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    isTty: process.stderr.isTTY === true,
    ...(interactive && {
      prompt: async (question) => {
        const rl = createInterface({ input: process.stdin, output: process.stdout });
        try {
          return await rl.question(question);
        } finally {
          rl.close();
        }
      },
    }),
  });
}
