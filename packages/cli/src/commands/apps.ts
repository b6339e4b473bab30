import {
  type AppConnection,
  AppProvider,
  getConnectionToken,
  listAppConnections,
  listAppProviders,
} from '@svc/contract';
import { ApiError, agentApiClient } from '../api-client.js';
import { ensureProfileLine, readAppsEnv, writeAppsEnv } from '../apps/apps-env-file.js';
import type { CliIo } from '../main.js';
import type { CliCommand } from './index.js';

/** What a person should do about a token that did not come, in words (410: reconnect; 503: retry). */
function explain(error: unknown, provider: string): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 410) {
    return new Error(
      `the ${provider} connection no longer works (it was revoked, expired or deleted): reconnect it in the dashboard under Apps, then run this again`,
    );
  }
  if (error.status === 503) {
    return new Error(
      `the ${provider} provider could not be reached just now (or is not configured on the service): try again in a minute`,
    );
  }
  return error;
}

async function configure(io: CliIo, provider: AppProvider, account: string | undefined) {
  const api = await agentApiClient(io);
  const [providers, connections] = await Promise.all([
    api(listAppProviders),
    api(listAppConnections),
  ]);
  const entry = providers.find((p) => p.provider === provider)!;
  const candidates = connections
    .filter((c) => c.provider === provider)
    .filter((c) => !account || c.providerAccountName === account || c.providerAccountId === account)
    .sort(
      (a, b) =>
        Number(b.status === 'active') - Number(a.status === 'active') ||
        b.updatedAt.localeCompare(a.updatedAt),
    );
  const connection = candidates[0];
  if (!connection) {
    throw new Error(
      `no ${provider} connection${account ? ` for ${account}` : ''} on this Agent's account: connect ${entry.displayName} in the dashboard under Apps`,
    );
  }
  const token = await api(getConnectionToken, { params: { id: connection.id } }).catch(
    (error: unknown) => {
      throw explain(error, provider);
    },
  );
  const home = io.env.HOME ?? '';
  const file = await writeAppsEnv(home, {
    [entry.envVar]: token.accessToken,
    [entry.accountEnvVar]: token.providerAccountName,
  });
  await ensureProfileLine(home);
  io.stdout.write(
    `${entry.envVar} and ${entry.accountEnvVar} set for ${token.providerAccountName} in ${file} (valid until ${token.expiresAt}).\n` +
      `New shells load it; in this one run: . ${file}\n` +
      `Try: ${entry.exampleCommand}\n`,
  );
}

async function listProviders(io: CliIo) {
  const providers = await (await agentApiClient(io))(listAppProviders);
  for (const p of providers) {
    io.stdout.write(
      `${p.provider.padEnd(6)} ${p.displayName} (${p.envVar}, token ${p.tokenLifetime})\n`,
    );
    io.stdout.write(`       ${p.description}\n`);
    for (const [scope, label] of Object.entries(p.scopeLabels)) {
      io.stdout.write(`       scope ${scope}: ${label}\n`);
    }
  }
}

async function listConnections(io: CliIo) {
  const api = await agentApiClient(io);
  const connections: AppConnection[] = await api(listAppConnections);
  const providers = await api(listAppProviders);
  const configured = await readAppsEnv(io.env.HOME ?? '');
  if (connections.length === 0) io.stdout.write('No app connections on this account.\n');
  for (const c of connections) {
    const entry = providers.find((p) => p.provider === c.provider)!;
    const here =
      configured[entry.accountEnvVar] === c.providerAccountName
        ? 'configured here'
        : 'not configured here';
    io.stdout.write(`${c.provider.padEnd(6)} ${c.providerAccountName}  ${c.status}  ${here}\n`);
  }
}

/** `svc apps providers|list|<provider>|refresh <provider>`. */
export const appsCommand: CliCommand = {
  register(program, io) {
    program
      .command('apps')
      .description('Connected apps: providers | list | <provider> | refresh <provider>')
      .argument('<action>', 'providers, list, refresh, or a provider (suite, code, music)')
      .argument('[provider]', 'the provider, for refresh')
      .option('--account <name>', 'which connected account, when there are several')
      .action(
        async (action: string, providerArg: string | undefined, options: { account?: string }) => {
          if (action === 'providers') return await listProviders(io);
          if (action === 'list') return await listConnections(io);
          const name = action === 'refresh' ? providerArg : action;
          const provider = AppProvider.safeParse(name);
          if (!provider.success) {
            throw new Error(`unknown provider "${name ?? ''}": use suite, code or music`);
          }
          // The service refreshes when less than five minutes remain; this fetches and rewrites.
          return await configure(io, provider.data, options.account);
        },
      );
  },
};
