import { type DestinationStream, type Logger, pino } from 'pino';
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

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream) {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'svc' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
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
