#!/usr/bin/env node
// Runs the TypeScript sources directly (Node 24 with tsx's loader).
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/main.ts');
process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
