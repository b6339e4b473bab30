import { connect, type Socket, type TcpNetConnectOpts } from 'node:net';

/**
 * Connect-time failures that may last only milliseconds: no route to the machine for a moment.
 * Incus takes its bridge's address off for about 12 ms at each change of the bridge's ACL list
 * (any machine made or deleted), and meanwhile the host's unreachable route for the subnet
 * (`npm run incus:setup`) fails a connection to a machine with one of these.
 */
const FLEETING_CODES: ReadonlySet<string> = new Set(['EHOSTUNREACH', 'ENETUNREACH']);

/** The waits before each try after a fleeting failure: both well past that window, and bounded. */
export const RETRY_DELAYS_MS: readonly number[] = [50, 200];

export type ConnectTarget = Pick<
  TcpNetConnectOpts,
  'host' | 'port' | 'localAddress' | 'family' | 'keepAlive' | 'keepAliveInitialDelay' | 'noDelay'
>;

export interface ConnectRetryingOptions extends ConnectTarget {
  /** The whole of it, tries and waits included, fails with `ETIMEDOUT` past this. */
  readonly timeoutMs: number;
  /** Opens one TCP connection (`net.connect`; a test's stand-in). */
  readonly dial?: (target: TcpNetConnectOpts) => Socket;
}

/**
 * A TCP connection to `host:port`, established. A try that fails with a fleeting failure is
 * made again after a short wait (`RETRY_DELAYS_MS`); any other failure (refused, reset, timed
 * out) is answered at once. Only the connect is tried again: nothing is sent on a connection
 * that was never established, so nothing is ever sent twice.
 */
export function connectRetrying(options: ConnectRetryingOptions): Promise<Socket> {
  const { timeoutMs, dial = connect, ...target } = options;
  return new Promise((resolve, reject) => {
    let socket: Socket | undefined;
    let pause: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      clearTimeout(pause);
      socket?.destroy();
      const error: NodeJS.ErrnoException = new Error(
        `connecting to ${target.host}:${target.port} timed out`,
      );
      error.code = 'ETIMEDOUT';
      reject(error);
    }, timeoutMs);
    const attempt = (retries: number) => {
      const current = dial(target);
      socket = current;
      const failed = (error: NodeJS.ErrnoException) => {
        current.destroy();
        const delay = RETRY_DELAYS_MS[retries];
        if (delay !== undefined && FLEETING_CODES.has(error.code ?? '')) {
          pause = setTimeout(() => attempt(retries + 1), delay);
          return;
        }
        clearTimeout(deadline);
        reject(error);
      };
      current.once('error', failed);
      current.once('connect', () => {
        clearTimeout(deadline);
        // From here its failures are its user's.
        current.off('error', failed);
        resolve(current);
      });
    };
    attempt(0);
  });
}
