// Over 400 lines: the one place the environment becomes Config, every check beside the value it
// guards so all problems are reported at once; per-area parsing already lives beside it
// (hetzner-config.ts, mail-config.ts, incus-public-ssh.ts, egress-allow.ts, gateway-ca-config.ts,
// price-book.ts).
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import type { Region, Size } from '@svc/contract';
import type { EncryptionKeyring } from '../crypto/token-cipher.js';
import { type Env, EnvSchema } from './env.js';
import { type GatewayCaPem, gatewayCaFromEnv } from './gateway-ca-config.js';
import { hetznerConfig } from './hetzner-config.js';
import { type IncusPublicSsh, incusPublicSsh } from './incus-public-ssh.js';
import type { WarmPoolCell } from './incus-warm-pool.js';
import { defaultMailFrom, splitSmtpUrl } from './mail-config.js';
import { defaultPriceBook, type Prices, parsePriceBook } from './price-book.js';
import { parseEncryptionKeys, parseHmacKey } from './secrets.js';

/** Where `npm run build -w @svc/web` puts the dashboard, from this file's place in the repo. */
const DEFAULT_DASHBOARD_DIR = path.join(import.meta.dirname, '../../../web/dist');
/** Where `npm run build:cli` puts the one-file `svc`. */
const DEFAULT_CLI_BUILD_DIR = path.join(import.meta.dirname, '../../../cli/dist');

export type DatabaseConfig =
  | { readonly kind: 'pglite'; readonly dataDir: string }
  | { readonly kind: 'postgres'; readonly url: string };

export type ObjectStoreConfig =
  | { readonly kind: 'fs'; readonly root: string }
  | {
      readonly kind: 's3';
      readonly bucket: string;
      readonly region: string;
      readonly endpoint?: string;
      readonly forcePathStyle: boolean;
    };

/** Where machines run: the local driver's directories, or Incus instances on its socket. */
export type ComputeConfig =
  | { readonly driver: 'local' }
  | {
      readonly driver: 'incus';
      readonly socketPath: string;
      /** A remote server or cluster (`INCUS_URL`), its client certificate and key files. */
      readonly remote?: IncusRemoteFiles;
      readonly project: string;
      readonly network: string;
      readonly storagePool: string;
      readonly sizeFactor: number;
      /** What Plain VMs are (Agents are always containers). */
      readonly instanceType: 'container' | 'virtual-machine';
      readonly agentImage: string;
      /** The one-file `svc` build (`npm run build:cli`) Agents get at their start. */
      readonly cliBuildDir: string;
      /** The public URL: machines reach the host only at the port their `SVC_API_URL` names. */
      readonly serviceUrl: string;
      /** `INCUS_EGRESS_ALLOW`: private or link-local IPv4 ranges machines may reach. */
      readonly egressAllow: readonly string[];
      /** Outside SSH to Plain VMs (`INCUS_PUBLIC_ADDRESS`); absent: the bridge only. */
      readonly publicSsh?: IncusPublicSsh;
      /** `INCUS_WARM_POOL`: machines kept booted for creates to claim; empty: none. */
      readonly warmPool: readonly WarmPoolCell[];
    }
  | HetznerConfig;

/** Hetzner Cloud (the token is a secret, kept apart). */
export interface HetznerConfig {
  readonly driver: 'hetzner';
  readonly endpoint: string;
  readonly locations: Readonly<Record<Region, string>>;
  readonly serverTypes: Readonly<Partial<Record<`${Size}-${Region}`, string>>>;
  readonly agentImage: string;
  readonly gatewaySources: readonly string[];
}

export interface IncusRemoteFiles {
  readonly url: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  readonly serverCertFile?: string;
}

/** What one publish may declare; `complete` holds the tarball's contents to the same list. */
export interface BundleLimits {
  readonly maxFileBytes: number;
  readonly maxTotalBytes: number;
}

/**
 * Where outgoing mail goes, and whom it is from: an SMTP server (`url` is `SMTP_URL` without its
 * password, a secret kept apart), or the embedded default, each message an `.eml` file in `dir`.
 */
export interface MailConfig {
  readonly from: string;
  /** `required`: machines and publishing wait for a verified e-mail (`EMAIL_VERIFICATION`). */
  readonly emailVerification: 'required' | 'optional';
  readonly transport:
    | { readonly kind: 'smtp'; readonly url: string }
    | { readonly kind: 'outbox'; readonly dir: string };
}

export interface ProviderEndpoints {
  readonly clientId?: string;
  readonly urls: Readonly<Record<string, string>>;
}

/** The header trusted proxies write the client address to (`TRUST_PROXY_HEADER`). */
export type ProxyHeader = Env['TRUST_PROXY_HEADER'];

/** The service's configuration: nested, read-only and free of secrets, so it is safe to log. */
export interface Config {
  readonly env: Env['NODE_ENV'];
  readonly logLevel: Env['LOG_LEVEL'];
  readonly dataDir: string;
  readonly http: {
    readonly port: number;
    readonly host: string;
    /** Origin and base of every URL the service hands out, without a trailing slash. */
    readonly publicUrl: string;
    /** Cookies get `Secure` when the public URL is HTTPS. */
    readonly secureCookies: boolean;
    /** Take the client address from `trustProxyHeader` (only behind a proxy that sets it). */
    readonly trustProxy: boolean;
    /** `TRUST_PROXY_HEADER`: `X-Forwarded-For` or RFC 7239's `Forwarded`, whichever the proxies write. */
    readonly trustProxyHeader: ProxyHeader;
    /**
     * With `trustProxy`: how many proxies of the operator's append to that header. The client is
     * the entry that many from the right; entries left of it are whatever the client sent.
     */
    readonly trustedProxyHops: number;
    /**
     * Agents' URLs, `<scheme>://<subdomain>.<domain>/` for every driver: hosts the service's edge
     * answers itself, proxying them to each Agent's gateway.
     */
    readonly agentOrigin: { readonly scheme: 'http' | 'https'; readonly domain: string };
    /** The built dashboard (`npm run build`), served at `/` and `/dashboard/`. */
    readonly dashboardDir: string;
    /** The one-file `svc` build (`npm run build:cli`), served at `/downloads/`. */
    readonly cliBuildDir: string;
  };
  readonly database: DatabaseConfig;
  readonly compute: ComputeConfig;
  readonly objectStore: ObjectStoreConfig;
  readonly bundles: BundleLimits;
  /** Snapshots one machine may hold at once (`SNAPSHOTS_PER_MACHINE`). */
  readonly snapshotsPerMachine: number;
  readonly mail: MailConfig;
  readonly billing: BillingConfig;
  readonly timing: {
    readonly provisionTimeoutMs: number;
    readonly refreshTimeoutMs: number;
    /** A running job's worker, silent this long, is taken for dead and the job retried. */
    readonly jobHeartbeatSeconds: number;
  };
  /** Idle stop: new Agents' `idleStopMinutes`, and how long such a minute is (60 s but in tests). */
  readonly idleStop: { readonly defaultMinutes: number; readonly unitMs: number };
  /** A stop: serve this long after turning not ready, then give the rest this long to finish. */
  readonly shutdown: { readonly drainMs: number; readonly graceMs: number };
  readonly providers: Readonly<Record<'suite' | 'code' | 'music', ProviderEndpoints>>;
}

/** Prices, and who collects the invoices (its keys are secrets, kept apart). */
export interface BillingConfig {
  /** `PRICES_FILE`, or the embedded price book. */
  readonly prices: Prices;
  readonly provider:
    | { readonly kind: 'none' }
    | { readonly kind: 'stripe'; readonly apiUrl?: string };
  readonly invoiceDueDays: number;
  readonly graceDays: number;
}

/** Secret values as read from the environment; `resolveSecrets` completes them. */
export interface RawSecrets {
  readonly encryption?: EncryptionKeyring;
  readonly hmacKey?: Buffer;
  readonly oauthClientSecrets: Partial<Record<'suite' | 'code' | 'music', string>>;
  readonly s3Credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly hcloudToken?: string;
  readonly smtpPassword?: string;
  readonly metricsToken?: string;
  readonly stripe?: { readonly secretKey: string; readonly webhookSecret: string };
  /** `GATEWAY_CA_CERT` and `GATEWAY_CA_KEY`, read and checked. */
  readonly gatewayCa?: GatewayCaPem;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Parses the environment once and reports every problem together. Secrets come back apart from
 * the configuration; error messages name variables, never their values.
 */
export function loadConfig(source: Readonly<Record<string, string | undefined>>): {
  config: Config;
  secrets: RawSecrets;
} {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
    );
  }
  const env = parsed.data;
  const problems: string[] = [];
  const check = <T>(name: string, result: T | string): T | undefined => {
    if (typeof result !== 'string') return result;
    problems.push(`${name}: ${result}`);
    return undefined;
  };

  const encryption = env.ENCRYPTION_KEYS
    ? check('ENCRYPTION_KEYS', parseEncryptionKeys(env.ENCRYPTION_KEYS))
    : undefined;
  const hmacKey = env.HMAC_KEY ? check('HMAC_KEY', parseHmacKey(env.HMAC_KEY)) : undefined;
  if (env.NODE_ENV === 'production') {
    // Generated development keys would live next to the data they protect.
    if (!env.ENCRYPTION_KEYS) problems.push('ENCRYPTION_KEYS: required when NODE_ENV=production');
    if (!env.HMAC_KEY) problems.push('HMAC_KEY: required when NODE_ENV=production');
    // The local driver's machines run as this service's own user: code in any of them can read
    // DATA_DIR, the other machines' tokens and this process's environment.
    if (env.COMPUTE_DRIVER === 'local') {
      problems.push(
        'COMPUTE_DRIVER: "local" is refused when NODE_ENV=production; its machines are not isolated from this service or from each other (development only)',
      );
    }
  }
  if (env.OBJECT_STORE === 's3') {
    for (const name of ['S3_BUCKET', 'S3_REGION'] as const) {
      if (!env[name]) problems.push(`${name}: required when OBJECT_STORE=s3`);
    }
  }
  if (Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
    problems.push('S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: set both or neither');
  }
  if (env.COMPUTE_DRIVER === 'hetzner' && !env.HCLOUD_TOKEN) {
    problems.push('HCLOUD_TOKEN: required when COMPUTE_DRIVER=hetzner');
  }
  if (env.INCUS_URL && (!env.INCUS_CLIENT_CERT || !env.INCUS_CLIENT_KEY)) {
    problems.push('INCUS_CLIENT_CERT, INCUS_CLIENT_KEY: required when INCUS_URL is set');
  }
  for (const provider of ['SUITE', 'CODE', 'MUSIC'] as const) {
    if (env[`${provider}_CLIENT_ID`] && !env[`${provider}_CLIENT_SECRET`]) {
      problems.push(`${provider}_CLIENT_SECRET: required when ${provider}_CLIENT_ID is set`);
    }
  }
  if (env.BILLING_PROVIDER === 'stripe') {
    for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const) {
      if (!env[name]) problems.push(`${name}: required when BILLING_PROVIDER=stripe`);
    }
  }
  const publicSsh = env.COMPUTE_DRIVER === 'incus' ? incusPublicSsh(env, check) : undefined;
  // Read before the problems are thrown: its own problems (a bad HCLOUD_* list) join them.
  const hetzner = env.COMPUTE_DRIVER === 'hetzner' ? hetznerConfig(env, check) : undefined;
  const gatewayCa = gatewayCaFromEnv(env, problems);
  const prices = env.PRICES_FILE ? loadPriceFile(env.PRICES_FILE, problems) : defaultPriceBook();
  if (problems.length > 0 || !prices) throw new ConfigError(problems);

  const dataDir = path.resolve(env.DATA_DIR);
  const publicUrl = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
  const smtp = env.SMTP_URL ? splitSmtpUrl(env.SMTP_URL) : undefined;
  const config: Config = {
    env: env.NODE_ENV,
    logLevel: env.LOG_LEVEL,
    dataDir,
    http: {
      port: env.PORT,
      host: env.HOST,
      publicUrl,
      secureCookies: publicUrl.startsWith('https:'),
      trustProxy: env.TRUST_PROXY,
      trustProxyHeader: env.TRUST_PROXY_HEADER,
      trustedProxyHops: env.TRUSTED_PROXY_HOPS,
      // Without AGENT_DOMAIN, Agents are subdomains of the public URL's host.
      agentOrigin: env.AGENT_DOMAIN
        ? { scheme: 'https', domain: env.AGENT_DOMAIN }
        : {
            scheme: publicUrl.startsWith('https:') ? 'https' : 'http',
            domain: subdomainHost(new URL(publicUrl)),
          },
      dashboardDir: path.resolve(env.DASHBOARD_DIR ?? DEFAULT_DASHBOARD_DIR),
      cliBuildDir: DEFAULT_CLI_BUILD_DIR,
    },
    database: env.DATABASE_URL
      ? { kind: 'postgres', url: env.DATABASE_URL }
      : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') },
    compute:
      env.COMPUTE_DRIVER === 'incus'
        ? {
            driver: 'incus',
            socketPath: env.INCUS_SOCKET,
            ...(env.INCUS_URL &&
              env.INCUS_CLIENT_CERT &&
              env.INCUS_CLIENT_KEY && {
                remote: {
                  url: env.INCUS_URL,
                  clientCertFile: env.INCUS_CLIENT_CERT,
                  clientKeyFile: env.INCUS_CLIENT_KEY,
                  ...(env.INCUS_SERVER_CERT && { serverCertFile: env.INCUS_SERVER_CERT }),
                },
              }),
            project: env.INCUS_PROJECT,
            network: env.INCUS_NETWORK,
            storagePool: env.INCUS_STORAGE_POOL,
            sizeFactor: env.INCUS_SIZE_FACTOR,
            instanceType: env.INCUS_INSTANCE_TYPE,
            agentImage: env.INCUS_AGENT_IMAGE,
            cliBuildDir: DEFAULT_CLI_BUILD_DIR,
            serviceUrl: publicUrl,
            egressAllow: env.INCUS_EGRESS_ALLOW,
            ...(publicSsh && { publicSsh }),
            warmPool: env.INCUS_WARM_POOL,
          }
        : (hetzner ?? { driver: 'local' }),
    objectStore:
      env.OBJECT_STORE === 's3'
        ? {
            kind: 's3',
            bucket: env.S3_BUCKET as string,
            region: env.S3_REGION as string,
            ...(env.S3_ENDPOINT && { endpoint: env.S3_ENDPOINT }),
            forcePathStyle: env.S3_FORCE_PATH_STYLE,
          }
        : { kind: 'fs', root: path.join(dataDir, 'objects') },
    bundles: { maxFileBytes: env.BUNDLE_MAX_FILE_BYTES, maxTotalBytes: env.BUNDLE_MAX_TOTAL_BYTES },
    snapshotsPerMachine: env.SNAPSHOTS_PER_MACHINE,
    mail: {
      from: env.MAIL_FROM ?? defaultMailFrom(publicUrl),
      emailVerification:
        env.EMAIL_VERIFICATION ?? (env.NODE_ENV === 'production' ? 'required' : 'optional'),
      transport: smtp
        ? { kind: 'smtp', url: smtp.url }
        : { kind: 'outbox', dir: path.join(dataDir, 'outbox') },
    },
    billing: {
      prices,
      provider:
        env.BILLING_PROVIDER === 'stripe'
          ? { kind: 'stripe', ...(env.STRIPE_API_URL && { apiUrl: env.STRIPE_API_URL }) }
          : { kind: 'none' },
      invoiceDueDays: env.INVOICE_DUE_DAYS,
      graceDays: env.BILLING_GRACE_DAYS,
    },
    timing: {
      provisionTimeoutMs: env.PROVISION_TIMEOUT_MS,
      jobHeartbeatSeconds: env.JOB_HEARTBEAT_SECONDS,
      refreshTimeoutMs: env.REFRESH_TIMEOUT_MS,
    },
    idleStop: { defaultMinutes: env.AGENT_IDLE_STOP_MINUTES, unitMs: env.AGENT_IDLE_UNIT_MS },
    shutdown: {
      drainMs: env.SHUTDOWN_DRAIN_SECONDS * 1_000,
      graceMs: env.SHUTDOWN_GRACE_SECONDS * 1_000,
    },
    providers: {
      suite: provider(env.SUITE_CLIENT_ID, {
        issuer: env.SUITE_ISSUER,
        authorization: env.SUITE_AUTHORIZATION_URL,
        token: env.SUITE_TOKEN_URL,
        revocation: env.SUITE_REVOCATION_URL,
        jwks: env.SUITE_JWKS_URL,
        userinfo: env.SUITE_USERINFO_URL,
      }),
      code: provider(env.CODE_CLIENT_ID, {
        authorization: env.CODE_AUTHORIZATION_URL,
        token: env.CODE_TOKEN_URL,
        api: env.CODE_API_URL,
      }),
      music: provider(env.MUSIC_CLIENT_ID, {
        authorization: env.MUSIC_AUTHORIZATION_URL,
        token: env.MUSIC_TOKEN_URL,
        api: env.MUSIC_API_URL,
      }),
    },
  };
  const secrets: RawSecrets = {
    ...(encryption && { encryption }),
    ...(hmacKey && { hmacKey }),
    oauthClientSecrets: {
      ...(env.SUITE_CLIENT_SECRET && { suite: env.SUITE_CLIENT_SECRET }),
      ...(env.CODE_CLIENT_SECRET && { code: env.CODE_CLIENT_SECRET }),
      ...(env.MUSIC_CLIENT_SECRET && { music: env.MUSIC_CLIENT_SECRET }),
    },
    ...(env.COMPUTE_DRIVER === 'hetzner' && env.HCLOUD_TOKEN && { hcloudToken: env.HCLOUD_TOKEN }),
    ...(smtp?.password && { smtpPassword: smtp.password }),
    ...(gatewayCa && { gatewayCa }),
    ...(env.METRICS_TOKEN && { metricsToken: env.METRICS_TOKEN }),
    ...(env.BILLING_PROVIDER === 'stripe' &&
      env.STRIPE_SECRET_KEY &&
      env.STRIPE_WEBHOOK_SECRET && {
        stripe: { secretKey: env.STRIPE_SECRET_KEY, webhookSecret: env.STRIPE_WEBHOOK_SECRET },
      }),
    ...(env.S3_ACCESS_KEY_ID &&
      env.S3_SECRET_ACCESS_KEY && {
        s3Credentials: {
          accessKeyId: env.S3_ACCESS_KEY_ID,
          secretAccessKey: env.S3_SECRET_ACCESS_KEY,
        },
      }),
  };
  return { config: deepFreeze(config), secrets };
}

const provider = (clientId: string | undefined, urls: Record<string, string>): ProviderEndpoints =>
  clientId ? { clientId, urls } : { urls };

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * The host Agents are subdomains of by default: the public host, unless that is an IP address
 * (which has no subdomains); then `localhost` on the same port, which browsers resolve with every
 * subdomain to loopback.
 */
function subdomainHost(publicUrl: URL): string {
  if (isIP(publicUrl.hostname.replace(/^\[|\]$/g, '')) === 0) return publicUrl.host;
  return publicUrl.port ? `localhost:${publicUrl.port}` : 'localhost';
}

/** Reads and checks `PRICES_FILE`, adding every problem to `problems`. */
function loadPriceFile(file: string, problems: string[]): Prices | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`PRICES_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
    return undefined;
  }
  const prices = parsePriceBook(text);
  if (!Array.isArray(prices)) return prices;
  problems.push(...prices.map((problem) => `PRICES_FILE: ${problem}`));
  return undefined;
}
