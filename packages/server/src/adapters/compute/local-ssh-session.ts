import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import pty from 'node-pty';
import type { PseudoTtyInfo, ServerChannel, Session } from 'ssh2';
import type { SshAccess } from './local-ssh-server.js';

const SHELL_PATH = '/usr/local/bin:/usr/bin:/bin';
/** The image's default user logs in to bash, as on the Debian and Ubuntu images. */
const LOGIN_SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
const IS_BASH = LOGIN_SHELL === '/bin/bash';
/** The interactive bash's rc file: it sets the prompt from `LOCAL_VM_PS1`, then runs ~/.bashrc. */
const BASH_RC = path.join(import.meta.dirname, 'local-plain-vm.bashrc');

type Terminal = Pick<PseudoTtyInfo, 'term' | 'cols' | 'rows'>;

/**
 * One SSH session of a local Plain VM: `exec` runs the command and `shell` an interactive shell,
 * both in the VM's home. After a `pty` request they get a real terminal (node-pty) of the size
 * and type the client asked for, resized on `window-change`, so line editing, Ctrl-C and
 * full-screen programs work; without one they talk through pipes, as `ssh host cmd` expects.
 *
 * The shell runs as the service's own Unix user: only the environment (USER, LOGNAME, HOME) and
 * the prompt present the image's default user.
 */
export function serveSession(session: Session, access: SshAccess): void {
  let terminal: Terminal | undefined;
  let running: Running | undefined;
  session.on('pty', (accept, _reject, info) => {
    terminal = { term: info.term || 'vt100', cols: info.cols || 80, rows: info.rows || 24 };
    accept?.();
  });
  session.on('window-change', (accept, _reject, info) => {
    if (terminal) terminal = { ...terminal, cols: info.cols, rows: info.rows };
    running?.resize(info.cols, info.rows);
    accept?.();
  });
  session.on('signal', (accept, reject, { name }) => {
    const signal = `SIG${name.replace(/^SIG/, '')}`;
    if (!running || !(signal in constants.signals)) return reject?.();
    running.signal(signal as NodeJS.Signals);
    accept?.();
  });
  // Accepted and ignored: the VM's locale and variables are its own.
  session.on('env', (accept) => accept?.());
  const start = (channel: ServerChannel, args: string[], isInteractive: boolean) => {
    running = terminal
      ? runInTerminal(channel, args, access, terminal, isInteractive)
      : runWithPipes(channel, args, access);
  };
  session.on('exec', (accept, _reject, { command }) => start(accept(), ['-c', command], false));
  session.on('shell', (accept) => {
    // Without a terminal, as sshd does, the shell reads commands from the pipe without prompts.
    const interactive = IS_BASH ? ['--rcfile', BASH_RC, '-i'] : ['-i'];
    start(accept(), terminal ? interactive : [], true);
  });
}

interface Running {
  resize(cols: number, rows: number): void;
  signal(signal: NodeJS.Signals): void;
}

function environment(access: SshAccess): Record<string, string> {
  return {
    HOME: access.home,
    USER: access.user,
    LOGNAME: access.user,
    PATH: SHELL_PATH,
    SHELL: LOGIN_SHELL,
  };
}

/**
 * `debian@box:~$ `: never `#`, since the default user is not root even when the service is. Bash
 * takes it from its rc file (Debian's /etc/bash.bashrc sets PS1 first), dash from PS1.
 */
function promptEnvironment(access: SshAccess): Record<string, string> {
  const name = `${access.user}@${access.hostname ?? 'localhost'}`.replace(/[^\w.@-]/g, '-');
  return IS_BASH ? { LOCAL_VM_PS1: `${name}:\\w$ ` } : { PS1: `${name}$ ` };
}

function runInTerminal(
  channel: ServerChannel,
  args: string[],
  access: SshAccess,
  terminal: Terminal,
  isInteractive: boolean,
): Running {
  let shell: pty.IPty;
  try {
    shell = pty.spawn(LOGIN_SHELL, args, {
      name: terminal.term,
      cols: terminal.cols,
      rows: terminal.rows,
      cwd: access.home,
      env: { ...environment(access), ...(isInteractive && promptEnvironment(access)) },
      // Bytes both ways: a multi-byte character split across reads must arrive whole.
      encoding: null,
    });
  } catch {
    channel.close();
    return { resize: () => {}, signal: () => {} };
  }
  let hasExited = false;
  let isPaused = false;
  (shell.onData as unknown as pty.IEvent<Buffer>)((data) => {
    // A client that reads slower than the shell prints holds the shell back, not our memory.
    if (!channel.write(data) && !isPaused) {
      isPaused = true;
      shell.pause();
      channel.once('drain', () => {
        isPaused = false;
        shell.resume();
      });
    }
  });
  channel.on('data', (data: Buffer) => shell.write(data));
  shell.onExit(({ exitCode, signal }) => {
    hasExited = true;
    const name = signal ? signalName(signal) : undefined;
    if (name) channel.exit(name);
    else channel.exit(exitCode);
    channel.end();
  });
  // A client gone (or the channel closed) hangs up the terminal, as sshd does.
  channel.on('close', () => {
    if (!hasExited) quietly(() => shell.kill('SIGHUP'));
  });
  return {
    // A shell that just exited has no terminal left to resize: no error.
    resize: (cols, rows) => quietly(() => shell.resize(cols, rows)),
    // The shell leads its own session and process group: the signal goes to that group, as
    // sshd's killpg does (an interactive shell's jobs have groups of their own).
    signal: (signal) => quietly(() => process.kill(-shell.pid, signal)),
  };
}

function runWithPipes(channel: ServerChannel, args: string[], access: SshAccess): Running {
  const child = spawn(LOGIN_SHELL, args, { cwd: access.home, env: environment(access) });
  // A client that sends more than the command reads (EPIPE) or a shell that fails to start must
  // cost this session only, never the VM's SSH server.
  child.stdin.on('error', () => {});
  child.on('error', () => channel.close());
  channel.pipe(child.stdin);
  child.stdout.pipe(channel, { end: false });
  child.stderr.pipe(channel.stderr, { end: false });
  child.on('close', (code, signal) => {
    if (signal) channel.exit(signal);
    else channel.exit(code ?? 1);
    channel.end();
  });
  channel.on('close', () => child.kill());
  return { resize: () => {}, signal: (signal) => child.kill(signal) };
}

const signalName = (signal: number) =>
  Object.entries(constants.signals).find(([, number]) => number === signal)?.[0];

function quietly(action: () => void) {
  try {
    action();
  } catch {}
}
