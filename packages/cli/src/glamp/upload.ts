import { createReadStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Upload } from '@svc/contract';

/** A progress bar on one line (a terminal) or a line per 10 % (a log). */
export function progressBar(write: (text: string) => unknown, total: number, isTty: boolean) {
  let done = 0;
  let lastTenth = -1;
  const mb = (n: number) => (n / 1e6).toFixed(1);
  return {
    advance(bytes: number) {
      done += bytes;
      const ratio = total === 0 ? 1 : done / total;
      const tenth = Math.floor(ratio * 10);
      const bar = `[${'#'.repeat(Math.round(ratio * 30)).padEnd(30, '.')}] ${Math.floor(ratio * 100)}% ${mb(done)}/${mb(total)} MB`;
      if (isTty) write(`\r${bar}`);
      else if (tenth !== lastTenth) {
        lastTenth = tenth;
        write(`${bar}\n`);
      }
    },
    finish() {
      if (isTty) write('\n');
    },
  };
}

/** PUTs one file to an upload URL, streaming it, with the exact length and signed headers. */
export function putFile(upload: Upload, file: string, onBytes: (n: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(upload.url);
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'PUT',
      headers: { ...upload.headers, 'content-length': String(upload.size) },
    });
    request.on('response', (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode && res.statusCode < 300
          ? resolve()
          : reject(new Error(`upload refused with status ${res.statusCode}`)),
      );
    });
    request.on('error', reject);
    const source = createReadStream(file);
    source.on('data', (chunk) => onBytes(chunk.length));
    source.on('error', reject);
    source.pipe(request);
  });
}
