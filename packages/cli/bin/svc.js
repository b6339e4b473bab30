#!/usr/bin/env node
// Runs the TypeScript sources directly (Node 24 with tsx's loader).
import { createInterface } from 'node:readline/promises';
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/main.ts');
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
