import { randomUUID } from 'node:crypto';
import pty from 'node-pty';

/** Output kept per session for a reloaded page to replay. */
const SCROLLBACK_BYTES = 256 * 1024;
/** A session nobody watches is ended after this long. */
const DETACHED_TTL_MS = 30 * 60_000;

interface Viewer {
  send(data: string): void;
  close(code: number, reason: string): void;
}

interface Session {
  readonly id: string;
  readonly pty: pty.IPty;
  output: string;
  viewer: Viewer | undefined;
  detachedAt: number | undefined;
}

/**
 * Real shells in the home, one per browser tab, that outlive the page: a reload reattaches to the
 * same shell (by the id the page keeps in sessionStorage) and replays its recent output.
 */
export class TerminalSessions {
  readonly #sessions = new Map<string, Session>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    readonly home: string,
    readonly env: Readonly<Record<string, string | undefined>>,
  ) {
    this.#timer = setInterval(() => this.#reap(), 60_000);
    this.#timer.unref();
  }

  /**
   * Attaches `viewer` to session `id` (or a new one). `greet` runs first with the session id, then
   * the viewer gets the session's recent output, then whatever the shell prints next.
   */
  attach(
    id: string | undefined,
    viewer: Viewer,
    size: { cols: number; rows: number },
    greet: (id: string) => void,
  ): string {
    let session = id ? this.#sessions.get(id) : undefined;
    if (!session) session = this.#spawn(size);
    // One viewer per session: a second tab on the same id takes it over.
    session.viewer?.close(4001, 'opened elsewhere');
    greet(session.id);
    if (session.output) viewer.send(session.output);
    session.viewer = viewer;
    session.detachedAt = undefined;
    resizeQuietly(session.pty, size.cols, size.rows);
    return session.id;
  }

  input(id: string, data: string): void {
    this.#sessions.get(id)?.pty.write(data);
  }

  resize(id: string, cols: number, rows: number): void {
    resizeQuietly(this.#sessions.get(id)?.pty, cols, rows);
  }

  detach(id: string, viewer: Viewer): void {
    const session = this.#sessions.get(id);
    if (session?.viewer !== viewer) return;
    session.viewer = undefined;
    session.detachedAt = Date.now();
  }

  close(): void {
    clearInterval(this.#timer);
    for (const session of this.#sessions.values()) session.pty.kill();
    this.#sessions.clear();
  }

  #spawn(size: { cols: number; rows: number }): Session {
    const shell = this.env.SHELL || (process.platform === 'linux' ? '/bin/bash' : '/bin/sh');
    const child = pty.spawn(shell, shellArgs(shell, this.env.SVC_TERMINAL_PATH), {
      name: 'xterm-256color',
      cols: size.cols,
      rows: size.rows,
      cwd: this.home,
      env: shellEnv(this.env, this.home),
    });
    const session: Session = {
      id: randomUUID(),
      pty: child,
      output: '',
      viewer: undefined,
      detachedAt: undefined,
    };
    child.onData((data) => {
      session.output = (session.output + data).slice(-SCROLLBACK_BYTES);
      session.viewer?.send(data);
    });
    child.onExit(() => {
      session.viewer?.close(4000, 'shell exited');
      this.#sessions.delete(session.id);
    });
    this.#sessions.set(session.id, session);
    return session;
  }

  #reap() {
    const cutoff = Date.now() - DETACHED_TTL_MS;
    for (const session of this.#sessions.values()) {
      if (session.detachedAt !== undefined && session.detachedAt < cutoff) session.pty.kill();
    }
  }
}

/** A shell that just exited has no terminal left to resize; that is no error. */
function resizeQuietly(terminal: pty.IPty | undefined, cols: number, rows: number) {
  try {
    terminal?.resize(cols, rows);
  } catch {}
}

/**
 * A login shell, as on any machine. With `SVC_TERMINAL_PATH` (directories the machine has on
 * PATH outside the system's, such as the local driver's `bin/` with `svc` in it), the login shell
 * reads the profile (which sets PATH anew), puts them in front and becomes an interactive shell.
 */
function shellArgs(shell: string, extraPath: string | undefined): string[] {
  if (!extraPath) return ['-l'];
  return ['-l', '-c', 'PATH="$0:$PATH"; export PATH; exec "$1" -i', extraPath, shell];
}

/**
 * The shell's environment: the gateway's own, less the service credentials it started with, so
 * `svc` in the terminal reads the current token from `agent.env` (it changes on a transfer).
 */
function shellEnv(env: Readonly<Record<string, string | undefined>>, home: string) {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !key.startsWith('SVC_')) out[key] = value;
  }
  return { ...out, HOME: home, TERM: 'xterm-256color' };
}
