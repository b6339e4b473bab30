// The entry of the one-file build (`npm run build:cli` → dist/svc.mjs).
import { runAsProcess } from './bin.js';

await runAsProcess();
