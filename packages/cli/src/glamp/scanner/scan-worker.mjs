// A scanner thread. Plain JavaScript that loads the TypeScript scanner through tsx itself, so it
// starts the same way under the `svc` binary, under tests and under benchmarks.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { scanBytes } = await import('./scan.ts');
parentPort.on('message', ({ id, file, bytes }) => {
  parentPort.postMessage({ id, result: scanBytes(file, bytes) });
});
