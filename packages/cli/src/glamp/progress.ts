import { SingleBar } from 'cli-progress';
import { formatBytes } from './report-print.js';

/** Where progress goes: stderr, with `isTTY` and `columns` when it is the process's own. */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * How a long step shows itself: `bar` redraws a line on a terminal (cli-progress) and leaves the
 * summary line; `lines` prints only the summary line (logs, an Agent's tool call); `quiet`
 * prints nothing (`--json` without a terminal: scripts read stdout, and stderr stays for errors).
 */
export type ProgressMode = 'bar' | 'lines' | 'quiet';

export const progressMode = (isTty: boolean, isJson: boolean): ProgressMode =>
  isTty ? 'bar' : isJson ? 'quiet' : 'lines';

/** What a finished step did; `--json` output lists them as `steps`. */
export interface StepSummary {
  readonly step: string;
  readonly files: number;
  readonly bytes: number;
  readonly seconds: number;
}

/** A step's words: `Scanning` while it runs, `Scanned` in its summary. */
export interface StepLabels {
  readonly active: string;
  readonly done: string;
}

/** The glamp commands' long steps, by the name `--json` gives them. */
export const STEPS = {
  /** `stage`: walk the home, copy, hash and scan. */
  scan: { active: 'Scanning', done: 'Scanned' },
  /** `confirm`, `rescan`: hash and scan the staging tree again. */
  check: { active: 'Checking', done: 'Checked' },
  tarball: { active: 'Packing', done: 'Packed' },
  upload: { active: 'Uploading', done: 'Uploaded' },
} as const satisfies Record<string, StepLabels>;

/** One step: totals once known, files and bytes as they are done, then its summary. */
export interface ProgressStep {
  /** The totals, once known (a walk may come first); the bar starts here. */
  begin(files: number, bytes: number): void;
  advance(files: number, bytes: number): void;
  /** Stops the bar and prints the summary line (except `quiet`). */
  finish(): StepSummary;
  /** Stops the bar and clears it, printing nothing: the failure is printed by `run`. */
  abort(): void;
}

/** The bar takes what the line leaves of the terminal's width, within these. */
const MIN_BAR = 10;
const MAX_BAR = 30;

const seconds = (ms: number) => Math.max(0, ms) / 1000;

const duration = (s: number) =>
  s < 60
    ? `${Math.ceil(s)}s`
    : `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`;

/** `50.3/120.0 MB`, the unit once when both share it. */
function bytesOf(done: number, total: number): string {
  const [doneText, totalText] = [formatBytes(done), formatBytes(total)];
  const unit = totalText.slice(totalText.indexOf(' '));
  return doneText.endsWith(unit)
    ? `${doneText.slice(0, -unit.length)}/${totalText}`
    : `${doneText}/${totalText}`;
}

/** `Scanned 3000 files, 120.0 MB in 4.2 s (28.6 MB/s)`: the line a step leaves. */
export function summaryLine(label: string, summary: StepSummary): string {
  const rate = summary.seconds > 0 ? summary.bytes / summary.seconds : 0;
  return `${label} ${summary.files} files, ${formatBytes(summary.bytes)} in ${summary.seconds.toFixed(1)} s (${formatBytes(Math.round(rate))}/s)`;
}

/**
 * The progress of a command's long steps (walk and scan, tarball, uploads): files and bytes
 * done, rate and time left. Rate and time left are the step's average so far, stable on many
 * small files where a moving window jumps.
 */
export class Progress {
  readonly steps: StepSummary[] = [];
  readonly #stream: ProgressStream;
  readonly #now: () => number;

  constructor(
    readonly mode: ProgressMode,
    stream: ProgressStream,
    /** Milliseconds; tests pass a clock they move. */
    now: () => number = () => performance.now(),
  ) {
    this.#stream = stream;
    this.#now = now;
  }

  /** Runs one step: its summary once `work` is done, the bar cleared if it fails. */
  async run<T>(name: keyof typeof STEPS, work: (step: ProgressStep) => Promise<T>): Promise<T> {
    const step = this.step(name, STEPS[name]);
    try {
      const result = await work(step);
      step.finish();
      return result;
    } catch (error) {
      step.abort();
      throw error;
    }
  }

  step(name: string, labels: StepLabels): ProgressStep {
    const startedAt = this.#now();
    let totalFiles = 0;
    let totalBytes = 0;
    let files = 0;
    let bytes = 0;
    let bar: SingleBar | undefined;
    const columns = this.#stream.columns || 80;
    let width = MIN_BAR;
    const line = () => {
      const ms = this.#now() - startedAt;
      const ratio = totalBytes > 0 ? bytes / totalBytes : totalFiles > 0 ? files / totalFiles : 1;
      const rate = ms > 0 ? bytes / seconds(ms) : 0;
      const left =
        bytes >= totalBytes
          ? ''
          : rate > 0
            ? `, ${duration((totalBytes - bytes) / rate)} left`
            : '';
      // Time left before the rate: on a narrow terminal the end of the line is cut.
      const rest = `${Math.floor(ratio * 100)}% ${files}/${totalFiles} files, ${bytesOf(bytes, totalBytes)}${left}, ${formatBytes(Math.round(rate))}/s`;
      const filled = Math.round(Math.min(1, ratio) * width);
      return `${labels.active} [${'#'.repeat(filled).padEnd(width, '.')}] ${rest}`;
    };
    if (this.mode === 'bar') {
      bar = new SingleBar({
        stream: { ...this.#terminal(), isTTY: true } as unknown as NodeJS.WritableStream,
        format: () => line(),
        fps: 10,
        // Truncated to the terminal's width instead of turning wrapping off: nothing to restore
        // if the process is interrupted.
        linewrap: true,
        clearOnComplete: true,
        hideCursor: false,
      });
      this.#stream.write(`${labels.active}…`);
    }
    const stop = () => {
      if (!bar) return;
      if (bar.isActive) bar.stop();
      else this.#stream.write('\r\x1b[K');
      bar = undefined;
    };
    return {
      begin: (f, b) => {
        totalFiles = f;
        totalBytes = b;
        // Fixed for the step (the longest the rest of the line gets), so the bar does not jitter.
        const longest = `100% ${f}/${f} files, ${bytesOf(b, b)}, 59m59s left, 999.9 MB/s`;
        width = Math.max(
          MIN_BAR,
          Math.min(MAX_BAR, columns - labels.active.length - longest.length - 4),
        );
        bar?.start(Math.max(1, b), 0);
      },
      advance: (f, b) => {
        files += f;
        bytes += b;
        bar?.update(bytes);
      },
      finish: () => {
        stop();
        const summary = { step: name, files, bytes, seconds: seconds(this.#now() - startedAt) };
        this.steps.push(summary);
        if (this.mode !== 'quiet') this.#stream.write(`${summaryLine(labels.done, summary)}\n`);
        return summary;
      },
      abort: stop,
    };
  }

  /**
   * Waits for `work` (a request the service takes time to answer): on a terminal a line says
   * what is awaited and for how long; otherwise nothing is printed.
   */
  async wait<T>(label: string, work: Promise<T>): Promise<T> {
    if (this.mode !== 'bar') return work;
    const startedAt = this.#now();
    const draw = () =>
      this.#stream.write(`\r\x1b[K${label}… ${Math.floor(seconds(this.#now() - startedAt))}s`);
    draw();
    const timer = setInterval(draw, 1000);
    try {
      return await work;
    } finally {
      clearInterval(timer);
      this.#stream.write('\r\x1b[K');
    }
  }

  /** What cli-progress writes to: our stream, its width when known. */
  #terminal() {
    const stream = this.#stream;
    return { write: (text: string) => stream.write(text), columns: stream.columns ?? 80 };
  }
}

/** The progress of one command: a bar on a terminal (stderr), else as `progressMode` says. */
export const commandProgress = (
  io: { readonly stderr: ProgressStream; readonly isTty?: boolean },
  isJson: boolean,
) => new Progress(progressMode(io.isTty ?? false, isJson), io.stderr);

/** `--json`: one document on stdout and nothing else there. */
export const writeJson = (
  io: { readonly stdout: { write(text: string): unknown } },
  doc: unknown,
) => io.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
