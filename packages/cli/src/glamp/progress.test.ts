import { afterEach, describe, expect, it, vi } from 'vitest';
import { Progress, type ProgressMode, progressMode } from './progress.js';

/** A stream that keeps what is written, and a clock the test moves. */
function fixture(mode: ProgressMode) {
  const written: string[] = [];
  let nowMs = 0;
  const progress = new Progress(
    mode,
    { write: (text: string) => written.push(text), isTTY: mode === 'bar', columns: 200 },
    () => nowMs,
  );
  return {
    progress,
    text: () => written.join(''),
    tick: (ms: number) => {
      nowMs += ms;
    },
  };
}

/** What a terminal would show: each `\r` or cursor move starts the line again. */
const screenLines = (text: string) =>
  text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are the subject
    .replace(/\x1b\[\d*G|\r/g, '\n')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are the subject
    .replace(/\x1b(\[[\d;?]*[A-Za-z]|[78])/g, '')
    .split('\n')
    .filter(Boolean);

describe('progress of the long steps', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('picks a bar on a terminal, else one line per step, and nothing with --json alone', () => {
    expect(progressMode(true, false)).toBe('bar');
    expect(progressMode(true, true)).toBe('bar');
    expect(progressMode(false, false)).toBe('lines');
    expect(progressMode(false, true)).toBe('quiet');
  });

  it('prints exactly one summary line per step without a terminal: files, bytes, seconds, rate', async () => {
    const { progress, text, tick } = fixture('lines');
    await progress.run('scan', async (step) => {
      step.begin(3, 3000);
      for (let i = 0; i < 3; i++) {
        tick(500);
        step.advance(1, 1000);
      }
    });
    await progress.run('upload', async (step) => {
      step.begin(2, 5_000_000);
      tick(2000);
      step.advance(2, 5_000_000);
    });
    await progress.run('tarball', async (step) => {
      step.begin(2, 143);
      tick(400);
      step.advance(2, 143);
    });
    expect(text()).toBe(
      'Scanned 3 files, 3.0 kB in 1.5 s (2.0 kB/s)\nUploaded 2 files, 5.0 MB in 2.0 s (2.5 MB/s)\nPacked 2 files, 143 B in 0.4 s (358 B/s)\n',
    );
    expect(progress.steps).toEqual([
      { step: 'scan', files: 3, bytes: 3000, seconds: 1.5 },
      { step: 'upload', files: 2, bytes: 5_000_000, seconds: 2 },
      { step: 'tarball', files: 2, bytes: 143, seconds: 0.4 },
    ]);
  });

  it('prints nothing in quiet mode, and nothing for a step that fails', async () => {
    const quiet = fixture('quiet');
    await quiet.progress.run('tarball', async (step) => {
      step.begin(1, 10);
      step.advance(1, 10);
    });
    expect(quiet.text()).toBe('');
    expect(quiet.progress.steps).toHaveLength(1);
    const lines = fixture('lines');
    await expect(
      lines.progress.run('check', async () => {
        throw new Error('disk gone');
      }),
    ).rejects.toThrow('disk gone');
    expect(lines.text()).toBe('');
    expect(lines.progress.steps).toEqual([]);
  });

  it('draws a bar on a terminal with files, bytes, rate and time left, then the summary', async () => {
    vi.useFakeTimers();
    const { progress, text, tick } = fixture('bar');
    await progress.run('upload', async (step) => {
      step.begin(4, 4_000_000);
      tick(1000);
      step.advance(1, 1_000_000);
      vi.advanceTimersByTime(250); // cli-progress redraws on its timer
      const shown = screenLines(text()).at(-1);
      // 1 MB in 1 s: 3 MB to go takes 3 s at that rate.
      expect(shown).toBe(
        `Uploading [${'#'.repeat(8)}${'.'.repeat(22)}] 25% 1/4 files, 1.0/4.0 MB, 3s left, 1.0 MB/s`,
      );
      tick(1000);
      step.advance(3, 3_000_000);
    });
    // The bar is cleared and the summary stays, as without a terminal.
    expect(screenLines(text()).at(-1)).toBe('Uploaded 4 files, 4.0 MB in 2.0 s (2.0 MB/s)');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('says on a terminal what it waits for, and stops saying it', async () => {
    vi.useFakeTimers();
    const { progress, text, tick } = fixture('bar');
    let answer = (_: string) => {};
    const asked = progress.wait(
      'Asking the service',
      new Promise<string>((resolve) => {
        answer = resolve;
      }),
    );
    tick(2000);
    vi.advanceTimersByTime(2000);
    expect(screenLines(text()).at(-1)).toBe('Asking the service… 2s');
    answer('ok');
    expect(await asked).toBe('ok');
    expect(text().endsWith('\r\x1b[K')).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
