import { readAgentEnv } from '../agent-env.js';
import { agentNameSource } from '../gateway/agent-name.js';
import { lazyAssets } from '../gateway/assets.js';
import { CodeServer, findCodeServer } from '../gateway/code-server.js';
import { agentDashboardUrl } from '../gateway/dashboard-link.js';
import { GatewayAuth } from '../gateway/gateway-auth.js';
import { createGatewayServer } from '../gateway/gateway-server.js';
import { GatewayTls } from '../gateway/gateway-tls.js';
import { reportSshActivity } from '../gateway/ssh-activity.js';
import type { CliIo } from '../main.js';
import { CLI_VERSION } from '../version.js';
import type { CliCommand } from './index.js';

/** `svc gateway`: the Agent's editor and terminal for the browser, until stopped. */
export const gatewayCommand: CliCommand = {
  register(program, io, setExitCode) {
    program
      .command('gateway')
      .description("Serve this Agent's editor and terminal to its account's members")
      .option('--port <port>', 'port to listen on (default: SVC_GATEWAY_PORT or 8443)')
      .option('--host <host>', 'address to listen on (default: SVC_GATEWAY_HOST or 0.0.0.0)')
      // The local driver marks its machines' processes with this; nothing else reads it.
      .option('--svc-machine <id>', 'machine marker (set by the local compute driver)')
      .action(async (options: { port?: string; host?: string }) => {
        setExitCode(await serveGateway(io, options));
      });
  },
};

async function serveGateway(io: CliIo, options: { port?: string; host?: string }): Promise<number> {
  const home = io.env.HOME;
  if (!home) {
    io.stderr.write('svc gateway: HOME is not set\n');
    return 1;
  }
  const port = Number(options.port ?? io.env.SVC_GATEWAY_PORT ?? 8443);
  const host = options.host ?? io.env.SVC_GATEWAY_HOST ?? '0.0.0.0';
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(
      `the gateway's port must be a number from 0 to 65535 (--port or SVC_GATEWAY_PORT), not "${options.port ?? io.env.SVC_GATEWAY_PORT}"`,
    );
  }
  // The platform says in agent.env whether browsers reach the gateway over HTTPS (through its
  // edge proxy); without a word, any address but loopback is taken to be behind HTTPS. Then the
  // cookie is Secure and `__Host-` prefixed.
  const isLoopback = host === '127.0.0.1' || host === 'localhost';
  const secure =
    io.env.SVC_GATEWAY_SECURE_COOKIES ?? (await readAgentEnv(home)).SVC_GATEWAY_SECURE_COOKIES;
  const secureCookies = (secure ?? String(!isLoopback)) === 'true';
  const codeServerBin =
    io.env.SVC_GATEWAY_BUILTIN_EDITOR === 'true' ? undefined : await findCodeServer(io.env);
  let codeServer: CodeServer | undefined;
  // Until code-server has started (or failed to), the editor's routes wait instead of serving
  // the built-in editor to an Agent opened right after its boot.
  let editorStarted = () => {};
  const editorReady: Promise<void> = codeServerBin
    ? new Promise((resolve) => {
        editorStarted = resolve;
      })
    : Promise.resolve();
  // A cloud machine's gateway speaks only TLS, to the service only (~/.crabglamp/gateway-tls).
  const tls = await GatewayTls.load(home);
  const gateway = createGatewayServer({
    tls,
    home,
    env: io.env,
    auth: new GatewayAuth(io.env),
    assets: lazyAssets(),
    version: CLI_VERSION,
    secureCookies,
    dashboardUrl: () => agentDashboardUrl(io.env),
    agentName: agentNameSource(io.env),
    // The editor is chosen per request, so code-server can join once it has started.
    get codeServer() {
      return codeServer;
    },
    editorReady: () => editorReady,
  });
  await new Promise<void>((resolve, reject) => {
    gateway.server.once('error', reject);
    gateway.server.listen(port, host, () => resolve());
  }).catch(async (error: NodeJS.ErrnoException) => {
    await gateway.close();
    const hint =
      error.code === 'EADDRINUSE'
        ? ': something else listens there (another svc gateway?); stop it or pass --port'
        : error.code === 'EACCES'
          ? ': a port below 1024 needs root; pass --port'
          : '';
    throw new Error(`the gateway cannot listen on ${host}:${port}: ${error.message}${hint}`);
  });
  io.stdout.write(`svc gateway listening on ${host}:${port}${tls ? ' (TLS)' : ''}\n`);
  // SSH sessions are a person at the Agent, which the edge never sees (its idle stop).
  const sshActivity =
    io.env.SVC_GATEWAY_SSH_ACTIVITY === 'off' ? undefined : reportSshActivity(io.env, io);
  // Started only once the port is ours: a gateway that cannot listen leaves nothing behind.
  if (codeServerBin) {
    codeServer = await CodeServer.start(codeServerBin, home, io.env).catch((error: unknown) => {
      io.stderr.write(
        `svc gateway: code-server did not start (${String(error)}); built-in editor\n`,
      );
      return undefined;
    });
    editorStarted();
  }
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve());
  });
  sshActivity?.stop();
  await gateway.close();
  return 0;
}
