// The scanner thread of the one-file build (dist/scan-worker.mjs, beside dist/svc.mjs, where
// `ScanPool` finds it as `./scan-worker.mjs`): the scanner compiled in, no loader needed.
import { parentPort } from 'node:worker_threads';
import { scanBytes } from './scan.js';

parentPort?.on('message', ({ id, file, bytes }) => {
  parentPort?.postMessage({ id, result: scanBytes(file, bytes) });
});
