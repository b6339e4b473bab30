import path from 'node:path';
import pty from 'node-pty';
import { describe, expect, it } from 'vitest';

/**
 * The bar on a real terminal: `svc`'s own stderr (a pseudo-terminal here), as `bin.ts` hands it
 * over, so cli-progress's cursor moves and the width it reads are the process's own.
 */
const SCRIPT = `
import { commandProgress } from ${JSON.stringify(path.join(import.meta.dirname, 'progress.ts'))};
const progress = commandProgress({ stderr: process.stderr, isTty: process.stderr.isTTY === true }, false);
await progress.run('upload', async (step) => {
  step.begin(4, 4_000_000);
  for (let i = 0; i < 4; i++) {
    step.advance(1, 1_000_000);
    // cli-progress redraws at most ten times a second: give it each state to draw.
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
});
`;

describe('progress on a pseudo-terminal', () => {
  it('draws the bar, then leaves the summary line', async () => {
    const child = pty.spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', SCRIPT],
      {
        cols: 120,
        rows: 10,
        cwd: path.join(import.meta.dirname, '../../../..'),
        env: { ...process.env, FORCE_COLOR: '0' },
      },
    );
    let output = '';
    child.onData((data) => {
      output += data;
    });
    const code = await new Promise<number>((resolve) => child.onExit((e) => resolve(e.exitCode)));
    expect(code, output).toBe(0);
    expect(output).toMatch(
      /Uploading \[#{8}\.{22}\] 25% 1\/4 files, 1\.0\/4\.0 MB, [\dm]+s left, [\d.]+ [kM]?B\/s/,
    );
    expect(output).toMatch(/Uploading \[#{23}\.{7}\] 75% 3\/4 files/);
    expect(output).toMatch(/Uploaded 4 files, 4\.0 MB in \d+\.\d s \([\d.]+ MB\/s\)\r?\n/);
  });
});
