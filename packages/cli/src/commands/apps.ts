import {
  type AppConnection,
  AppProvider,
  type AppProviderEntry,
  getConnectionToken,
  listAppConnections,
  listAppProviders,
} from '@svc/contract';
import { type ApiClient, ApiError, agentApiClient } from '../api-client.js';
import { ensureProfileLine, readAppsEnv, writeAppsEnv } from '../apps/apps-env-file.js';
import type { CliIo } from '../main.js';
import type { CliCommand } from './index.js';

/** What a person should do about a token that did not come, in words (410: reconnect; 503: retry). */
function explain(error: unknown, provider: string, entry: AppProviderEntry): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 410) {
    return new Error(
      `the ${provider} connection no longer works (it was revoked, expired or deleted): reconnect it in the dashboard under Apps, then run this again`,
    );
  }
  if (error.status === 503) {
    return new Error(
      entry.configured
        ? `the ${provider} provider could not be reached just now: try again in a minute`
        : `${entry.displayName} (${provider}) is no longer configured on this service: ask its operator`,
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
  if (!connection && !entry.configured) {
    throw new Error(
      `${entry.displayName} (${provider}) is not configured on this service: its operator has to set it up before it can be connected (svc apps lists the configured providers)`,
    );
  }
  if (!connection) {
    throw new Error(
      `no ${provider} connection${account ? ` for ${account}` : ''} on this Agent's account: connect ${entry.displayName} in the dashboard under Apps`,
    );
  }
  const token = await api(getConnectionToken, { params: { id: connection.id } }).catch(
    (error: unknown) => {
      throw explain(error, provider, entry);
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

/** The providers and whether the operator configured each (only those can be connected). */
async function listProviders(io: CliIo, json: boolean) {
  const providers = await (await agentApiClient(io))(listAppProviders);
  if (json) return printJson(io, providers);
  for (const p of providers) {
    const state = p.configured
      ? 'configured'
      : 'not configured on this service (its operator has not set it up)';
    io.stdout.write(`${p.provider.padEnd(6)} ${p.displayName}: ${state}\n`);
    io.stdout.write(`       ${p.description} (${p.envVar}, token ${p.tokenLifetime})\n`);
    for (const [scope, label] of Object.entries(p.scopeLabels)) {
      io.stdout.write(`       scope ${scope}: ${label}\n`);
    }
  }
  if (providers.some((p) => p.configured)) {
    io.stdout.write('Connect one in the dashboard under Apps, then: svc apps <provider>\n');
  }
}

/** What a connection does now, found by asking for its token (as `svc apps <provider>` would). */
type ConnectionState =
  | { state: 'works'; tokenExpiresAt: string }
  | {
      state: 'needs_reconnect' | 'provider_unavailable' | 'provider_not_configured';
      detail: string;
    };

async function stateOf(
  api: ApiClient,
  connection: AppConnection,
  entry: AppProviderEntry,
): Promise<ConnectionState> {
  try {
    const token = await api(getConnectionToken, { params: { id: connection.id } });
    return { state: 'works', tokenExpiresAt: token.expiresAt };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 410) {
      return {
        state: 'needs_reconnect',
        detail: 'it was revoked, expired or deleted: reconnect it in the dashboard under Apps',
      };
    }
    if (error.status === 503 && !entry.configured) {
      return {
        state: 'provider_not_configured',
        detail: `${entry.displayName} is no longer configured on this service: ask its operator`,
      };
    }
    if (error.status === 503) {
      return {
        state: 'provider_unavailable',
        detail: `${entry.displayName} could not be reached just now: try again in a minute`,
      };
    }
    throw error;
  }
}

/** Each connection of the account, with what it does now and whether this Agent has it set up. */
async function listConnections(io: CliIo, json: boolean) {
  const api = await agentApiClient(io);
  const [connections, providers] = await Promise.all([
    api(listAppConnections),
    api(listAppProviders),
  ]);
  const inAppsEnv = await readAppsEnv(io.env.HOME ?? '');
  const rows = await Promise.all(
    connections.map(async (c) => {
      const entry = providers.find((p) => p.provider === c.provider)!;
      return {
        id: c.id,
        provider: c.provider,
        account: c.providerAccountName,
        ...(await stateOf(api, c, entry)),
        isSetUpHere: inAppsEnv[entry.accountEnvVar] === c.providerAccountName,
      };
    }),
  );
  if (json) return printJson(io, rows);
  if (rows.length === 0) {
    io.stdout.write(
      'No app connections on this account: connect one in the dashboard under Apps.\n',
    );
  }
  for (const row of rows) {
    const state =
      row.state === 'works' ? `works (token valid until ${row.tokenExpiresAt})` : row.detail;
    const here = row.isSetUpHere ? 'set up here' : `not set up here: svc apps ${row.provider}`;
    io.stdout.write(`${row.provider.padEnd(6)} ${row.account}  ${state}  ${here}\n`);
  }
}

function printJson(io: CliIo, value: unknown) {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `svc apps [providers]|list|<provider>|refresh <provider>`. */
export const appsCommand: CliCommand = {
  register(program, io) {
    program
      .command('apps')
      .description(
        'Connected apps: the configured providers, list, <provider> or refresh <provider>',
      )
      .argument(
        '[action]',
        'providers (the default), list, refresh, or a provider (suite, code, music)',
      )
      .argument('[provider]', 'the provider, for refresh')
      .option('--account <name>', 'which connected account, when there are several')
      .option('--json', 'print providers or list as JSON')
      .action(
        async (
          action: string | undefined,
          providerArg: string | undefined,
          options: { account?: string; json?: boolean },
        ) => {
          const json = options.json === true;
          if (action === undefined || action === 'providers') return await listProviders(io, json);
          if (action === 'list') return await listConnections(io, json);
          const name = action === 'refresh' ? providerArg : action;
          const provider = AppProvider.safeParse(name);
          if (!provider.success) {
            throw new Error(
              `unknown provider "${name ?? ''}": use suite, code or music (svc apps lists them)`,
            );
          }
          // The service refreshes when less than five minutes remain; this fetches and rewrites.
          return await configure(io, provider.data, options.account);
        },
      );
  },
};
