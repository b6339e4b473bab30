import { type DestinationStream, type Logger, pino } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { Config } from './config/config.js';

export type { Logger };

/**
 * Fields that may carry credentials, wherever they appear in a log object. Log lines are built
 * from explicit fields (never whole requests or bodies); this list is the second line of defence.
 */
const CREDENTIAL_FIELDS = [
  'password',
  'passwordHash',
  'sessionId',
  'session',
  'cookie',
  'set-cookie',
  'authorization',
  'token',
  'accessToken',
  'refreshToken',
  'hmacToken',
  'hmac',
  'secret',
  'clientSecret',
  'codeVerifier',
  'privateKey',
  'initialPassword',
];

export const REDACT_PATHS = CREDENTIAL_FIELDS.flatMap((field) =>
  /^[A-Za-z_$][\w$]*$/.test(field)
    ? [field, `*.${field}`, `*.*.${field}`]
    : [`["${field}"]`, `*["${field}"]`, `*.*["${field}"]`],
);

/** Where log lines go; a terminal says so with `isTTY`, as `process.stdout` does. */
export type LogDestination = DestinationStream & { readonly isTTY?: boolean };

/**
 * The root logger. On a terminal its lines are pino-pretty's readable ones; anywhere else (a file,
 * a pipe, a log collector) one JSON object per line. Redaction runs before either.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  destination: LogDestination = process.stdout,
): Logger {
  const options = {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (isTerminal(destination) && config.logLevel !== 'silent') {
    const prettify = prettyFactory({
      colorize: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service',
      // Each line's fields beside its message, not one per row: a terminal scrolls through many.
      singleLine: true,
    });
    // Formatted in this thread as each line is written: a terminal is a person reading, not load.
    return pino(options, {
      write: (line: string) => destination.write(prettify(requestInOneLine(line))),
    });
  }
  // fd 1 through pino's own writer is faster than process.stdout's stream.
  return pino(options, destination === process.stdout ? pino.destination(1) : destination);
}

/**
 * A request line (`app.ts`) as a terminal shows it: `GET /api/agents 200 3.1 ms`, its fields in
 * the message rather than after it. Any other line as it is.
 */
export function requestInOneLine(line: string): string {
  if (!line.includes('"msg":"request')) return line;
  const { method, path, status, ms, requestId, subsystem, msg, ...rest } = JSON.parse(line);
  if (msg !== 'request' && msg !== 'request failed') return line;
  const failed = msg === 'request failed' ? ` (request ${requestId})` : '';
  return JSON.stringify({ ...rest, msg: `${method} ${path} ${status} ${ms} ms${failed}` });
}

export const isTerminal = (destination: LogDestination): boolean => destination.isTTY === true;

/**
 * A warning nobody may miss (development keys): a box on a terminal, where it would otherwise
 * scroll by among the start-up lines; a plain `warn` line where logs are collected.
 */
export function warnLoudly(log: Logger, message: string, output: LogDestination = process.stdout) {
  if (!isTerminal(output)) {
    log.warn(message);
    return;
  }
  output.write(`${warningBox(message)}\n`);
}

/** `message` wrapped to `width` columns inside a frame. */
export function warningBox(message: string, width = 76): string {
  const lines: string[] = [];
  let line = '';
  for (const word of message.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  const inner = Math.max(...lines.map((l) => l.length));
  const bar = '═'.repeat(inner + 2);
  return [`╔${bar}╗`, ...lines.map((l) => `║ ${l.padEnd(inner)} ║`), `╚${bar}╝`].join('\n');
}

/** Named subsystem loggers, declared once. */
export function subsystemLoggers(root: Logger) {
  return {
    root,
    http: root.child({ subsystem: 'http' }),
    jobs: root.child({ subsystem: 'jobs' }),
    db: root.child({ subsystem: 'db' }),
    admin: root.child({ subsystem: 'admin' }),
    accounts: root.child({ subsystem: 'accounts' }),
  };
}
export type Loggers = ReturnType<typeof subsystemLoggers>;
