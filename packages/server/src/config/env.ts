import { DEFAULT_SNAPSHOTS_PER_MACHINE } from '@svc/contract';
import { z } from 'zod';
import { parseEgressAllow } from './egress-allow.js';
import { parseWarmPool } from './incus-warm-pool.js';
import { isMailbox } from './mail-config.js';

const optional = z
  .string()
  .optional()
  .transform((value) => (value === '' ? undefined : value));
/**
 * Every URL variable is read as `URL` reads it (what the HTTP client will connect to), never by
 * its text: `http://localhost:1@evil.example/` is a user `localhost` at `evil.example`.
 */
const parsedUrl = (value: string) => (URL.canParse(value) ? new URL(value) : undefined);
/**
 * No user or password part: credentials belong in their own (secret) variables, and one in a URL
 * would be logged with the configuration. (DATABASE_URL and SMTP_URL are the documented
 * exceptions: their drivers take the password from the URL, and they are split off as secrets.)
 */
const withoutCredentials = <T extends z.ZodType<string>>(schema: T) =>
  schema.refine((value) => {
    const parsed = parsedUrl(value);
    return !parsed || (parsed.username === '' && parsed.password === '');
  }, 'a URL without a user or password part (no user:password@)');
const url = withoutCredentials(z.url({ protocol: /^https?$/ }));
const optionalUrl = optional.pipe(url.optional());
/** This host, as `URL` spells its hostname. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** A URL a secret travels to: HTTPS, or plain HTTP to this host only (a stand-in). */
const secretBearingUrl = url.refine((value) => {
  const parsed = parsedUrl(value);
  return !parsed || parsed.protocol === 'https:' || LOOPBACK_HOSTS.has(parsed.hostname);
}, 'an https:// URL (plain http:// only to this host)');
/**
 * A list variable (empty by default) read by `parse`, which answers the value or, for a malformed
 * one, the problem in words (reported with the variable's name).
 */
const listOf = <T extends object>(parse: (raw: string) => T | string) =>
  z
    .string()
    .default('')
    .transform((raw, ctx) => {
      const parsed = parse(raw);
      if (typeof parsed !== 'string') return parsed;
      ctx.addIssue({ code: 'custom', message: parsed });
      return z.NEVER;
    });
const integer = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .default('false')
  .transform((value) => ['true', '1', 'yes'].includes(value));

/**
 * Every environment variable the service reads, with its default. Parsed once in `main`; nothing
 * else reads the environment. Secret-bearing variables are parsed here as plain strings and split
 * off into `Secrets` by `loadConfig`, so they never travel with the loggable configuration.
 */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PORT: integer(8080, 0, 65535),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: optional.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  PUBLIC_URL: optionalUrl,
  /** Agents are served at `https://<subdomain>.<AGENT_DOMAIN>/` (cloud drivers). */
  AGENT_DOMAIN: optional.pipe(
    z
      .string()
      .regex(
        /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(:\d{1,5})?$/,
        'a domain such as agents.example.com',
      )
      .optional(),
  ),
  TRUST_PROXY: boolean,
  /**
   * The one header the proxies write the client address to (with TRUST_PROXY): the other is
   * whatever the client sent, so it is never read for the address.
   */
  TRUST_PROXY_HEADER: z.enum(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'),
  /** How many proxies in front of the service append to TRUST_PROXY_HEADER (with TRUST_PROXY). */
  TRUSTED_PROXY_HOPS: integer(1, 1, 10),
  DASHBOARD_DIR: optional,
  ENCRYPTION_KEYS: optional,
  HMAC_KEY: optional,
  COMPUTE_DRIVER: z.enum(['local', 'incus', 'hetzner']).default('local'),
  /** The Incus daemon's Unix socket (`COMPUTE_DRIVER=incus`). */
  INCUS_SOCKET: z.string().min(1).default('/var/lib/incus/unix.socket'),
  /** A remote Incus server or cluster (`https://host:8443`) instead of the socket. */
  INCUS_URL: optional.pipe(
    withoutCredentials(z.url({ protocol: /^https$/, error: 'an https:// URL' })).optional(),
  ),
  /** With INCUS_URL: files holding the client certificate and key (PEM) the server trusts. */
  INCUS_CLIENT_CERT: optional,
  INCUS_CLIENT_KEY: optional,
  /** With INCUS_URL: the server's own certificate (PEM file), trusted alone. */
  INCUS_SERVER_CERT: optional,
  INCUS_PROJECT: z.string().min(1).default('default'),
  /** The managed bridge machines are attached to; their firewalls are ACLs on it. */
  INCUS_NETWORK: z.string().min(1).default('incusbr0'),
  /** The pool of machines' root disks; `incus:setup` makes it copy-on-write (btrfs). */
  INCUS_STORAGE_POOL: z.string().min(1).default('svc'),
  /** Scales the size table's CPU, memory and disk down for small development hosts. */
  INCUS_SIZE_FACTOR: z.coerce.number().gt(0).max(1).default(1),
  /** Plain VMs as system containers, or as virtual machines where the hosts have KVM. */
  INCUS_INSTANCE_TYPE: z.enum(['container', 'virtual-machine']).default('container'),
  /** The image Agents boot (`npm run admin -- images build` makes it). */
  INCUS_AGENT_IMAGE: z.string().min(1).default('svc-agent'),
  /**
   * IPv4 CIDRs machines may reach though private, shared or link-local (`10.20.0.0/16,…`);
   * never the bridge's other machines (their firewalls decide) nor the host. Default: none.
   */
  INCUS_EGRESS_ALLOW: listOf(parseEgressAllow),
  /**
   * Where Plain VMs are reached by SSH from outside (a network forward per VM): an address of the
   * host (`203.0.113.5`), or one per cluster member (`member1=203.0.113.5,member2=…`). Unset:
   * only the host reaches them, on the bridge.
   */
  INCUS_PUBLIC_ADDRESS: optional,
  /** The ports of INCUS_PUBLIC_ADDRESS handed out, one per Plain VM (`first-last`). */
  INCUS_SSH_PORTS: z.string().default('22000-22999'),
  /**
   * Hours a port freed by a destroyed Plain VM is held back before another VM may get it (its
   * users' ssh to the old host:port would reach a stranger's machine) while the range has other
   * ports; with none left the one held longest is handed on. 0: no hold.
   */
  INCUS_SSH_PORT_HOLD_HOURS: integer(24, 0, 24 * 365),
  /**
   * Machines kept booted and unclaimed per cell (`plain_vm:debian-12:small:eu=2,agent:small:eu=1`):
   * a create that matches a cell takes one and makes it the tenant's instead of launching.
   * Empty: no pool.
   */
  INCUS_WARM_POOL: listOf(parseWarmPool),
  /** Hetzner Cloud's API (`COMPUTE_DRIVER=hetzner`); a stand-in's in tests. */
  // The token travels with every request: HTTPS, or plain HTTP to this host only (a stand-in).
  HCLOUD_ENDPOINT: secretBearingUrl.default('https://api.hetzner.cloud/v1'),
  /** The project's API token (read and write). Secret. */
  HCLOUD_TOKEN: optional,
  /** Hetzner's location of each region: `us=hil,eu=hel1`. */
  HCLOUD_LOCATIONS: z.string().default('us=hil,eu=hel1'),
  /** Server types for cells of the size table, e.g. `small-eu=cpx22`; the rest are chosen. */
  HCLOUD_SERVER_TYPES: z.string().default(''),
  /** The system image Agents boot; cloud-init installs `svc` on it. */
  HCLOUD_AGENT_IMAGE: z.string().min(1).default('debian-12'),
  /** Where the edge proxy reaches Agents from: their firewall's only opening (CIDRs). */
  HCLOUD_GATEWAY_SOURCES: z.string().default('0.0.0.0/0,::/0'),
  /**
   * The authority of the TLS path to cloud machines' gateways (incus, hetzner): its certificate
   * and private key, each PEM text or the path of a PEM file. Required when NODE_ENV=production
   * with a cloud driver; otherwise generated into DATA_DIR/gateway-ca.json on first start.
   */
  GATEWAY_CA_CERT: optional,
  GATEWAY_CA_KEY: optional,
  OBJECT_STORE: z.enum(['fs', 's3']).default('fs'),
  S3_BUCKET: optional,
  S3_REGION: optional,
  S3_ENDPOINT: optionalUrl,
  S3_FORCE_PATH_STYLE: boolean,
  S3_ACCESS_KEY_ID: optional,
  S3_SECRET_ACCESS_KEY: optional,
  /** A bundle's largest file, and the sum of its files, as a publish declares them (bytes). */
  BUNDLE_MAX_FILE_BYTES: integer(100_000_000, 1, 1_000_000_000_000),
  BUNDLE_MAX_TOTAL_BYTES: integer(2_000_000_000, 1, 1_000_000_000_000),
  /** Snapshots one machine may hold at once (the next is 409 `snapshot_limit`). */
  SNAPSHOTS_PER_MACHINE: integer(DEFAULT_SNAPSHOTS_PER_MACHINE, 1, 1_000),
  /**
   * Outgoing mail's server, `smtp://user:pass@host:587` (STARTTLS when offered; required with a
   * user and another host, see splitSmtpUrl) or `smtps://`; query parameters are nodemailer's options. Unset: `.eml` files in `DATA_DIR/outbox/`. Its
   * password is a secret.
   */
  SMTP_URL: optional.pipe(
    z.url({ protocol: /^smtps?$/, error: 'an smtp:// or smtps:// URL' }).optional(),
  ),
  /** The sender of every message, `Name <address>`; by default `svc <noreply@PUBLIC_URL's host>`. */
  MAIL_FROM: optional.pipe(
    z.string().refine(isMailbox, 'one mailbox, such as "svc <noreply@example.com>"').optional(),
  ),
  /**
   * `required`: unverified users may sign in and look around, but not create machines or
   * publish. Unset: `required` when NODE_ENV=production, else `optional` (a reminder only).
   */
  EMAIL_VERIFICATION: optional.pipe(z.enum(['required', 'optional']).optional()),
  /** The price book (JSON, docs/billing.md); unset: the embedded one. */
  PRICES_FILE: optional,
  /** Who collects invoices: `none` (the operator marks them paid) or `stripe`. */
  BILLING_PROVIDER: z.enum(['none', 'stripe']).default('none'),
  /** Stripe's API key and the signing secret of its webhook endpoint (secrets). */
  STRIPE_SECRET_KEY: optional,
  STRIPE_WEBHOOK_SECRET: optional,
  /** Another address for Stripe's API (`http://127.0.0.1:12111`: a stand-in, for tests). */
  // The secret key travels with every request: HTTPS, or plain HTTP to this host only.
  STRIPE_API_URL: optional.pipe(secretBearingUrl.optional()),
  /** Days from an invoice's issue to its due date. */
  INVOICE_DUE_DAYS: integer(14, 0, 365),
  /** Days past an invoice's due date the subscription stays usable (`past_due`) unpaid. */
  BILLING_GRACE_DAYS: integer(7, 0, 365),
  PROVISION_TIMEOUT_MS: integer(300_000, 1_000, 86_400_000),
  /** Minutes unused after which a new Agent is stopped (its `idleStopMinutes`); 0: never. */
  AGENT_IDLE_STOP_MINUTES: integer(60, 0, 10_080),
  /**
   * Tests only: how long one of `idleStopMinutes`' minutes lasts (ms), so an idle stop can be
   * seen in seconds. The edge's activity writes follow it (a quarter of it apart at most).
   */
  AGENT_IDLE_UNIT_MS: integer(60_000, 100, 60_000),
  /**
   * Seconds a stopping process keeps serving after `/readyz` turned not ready, so a load balancer
   * (checking every second or two) has stopped sending it requests before its listener closes.
   */
  SHUTDOWN_DRAIN_SECONDS: integer(0, 0, 300),
  /** Seconds a stopping process gives in-flight requests and running jobs to finish. */
  SHUTDOWN_GRACE_SECONDS: integer(30, 1, 3_600),
  /** A job whose process fell silent this long (killed) is retried by another (seconds). */
  JOB_HEARTBEAT_SECONDS: integer(30, 10, 3_600),
  REFRESH_TIMEOUT_MS: integer(10_000, 100, 120_000),
  /**
   * Bearer token that opens `GET /metrics` to other addresses than loopback. Secret; unset, only
   * loopback may scrape.
   */
  METRICS_TOKEN: optional.pipe(z.string().min(16, 'at least 16 characters').optional()),
  // OAuth providers' URLs carry secrets (the client secret to the token URL, users' tokens to
  // the API) or vouch for them (the JWKS keys, the sign-in page): HTTPS, plain HTTP to this host.
  SUITE_CLIENT_ID: optional,
  SUITE_CLIENT_SECRET: optional,
  SUITE_ISSUER: secretBearingUrl.default('https://accounts.google.com'),
  SUITE_AUTHORIZATION_URL: secretBearingUrl.default('https://accounts.google.com/o/oauth2/v2/auth'),
  SUITE_TOKEN_URL: secretBearingUrl.default('https://oauth2.googleapis.com/token'),
  SUITE_REVOCATION_URL: secretBearingUrl.default('https://oauth2.googleapis.com/revoke'),
  SUITE_JWKS_URL: secretBearingUrl.default('https://www.googleapis.com/oauth2/v3/certs'),
  SUITE_USERINFO_URL: secretBearingUrl.default('https://openidconnect.googleapis.com/v1/userinfo'),
  CODE_CLIENT_ID: optional,
  CODE_CLIENT_SECRET: optional,
  CODE_AUTHORIZATION_URL: secretBearingUrl.default('https://github.com/login/oauth/authorize'),
  CODE_TOKEN_URL: secretBearingUrl.default('https://github.com/login/oauth/access_token'),
  CODE_API_URL: secretBearingUrl.default('https://api.github.com'),
  MUSIC_CLIENT_ID: optional,
  MUSIC_CLIENT_SECRET: optional,
  MUSIC_AUTHORIZATION_URL: secretBearingUrl.default('https://accounts.spotify.com/authorize'),
  MUSIC_TOKEN_URL: secretBearingUrl.default('https://accounts.spotify.com/api/token'),
  MUSIC_API_URL: secretBearingUrl.default('https://api.spotify.com'),
});
export type Env = z.infer<typeof EnvSchema>;
