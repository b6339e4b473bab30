import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { gatewayCaEnv } from '../../test/gateway-ca-env.js';
import { ConfigError, loadConfig } from './config.js';
import { Secrets } from './secrets.js';

const key = (fill: number) => Buffer.alloc(32, fill).toString('base64');

describe('loadConfig', () => {
  let ca: Awaited<ReturnType<typeof gatewayCaEnv>>;
  beforeAll(async () => {
    ca = await gatewayCaEnv();
  });

  it('applies the documented defaults', () => {
    const { config, secrets } = loadConfig({});
    expect(config.http).toMatchObject({
      port: 8080,
      publicUrl: 'http://localhost:8080',
      secureCookies: false,
      trustProxy: false,
      trustedProxyHops: 1,
    });
    expect(config.database.kind).toBe('pglite');
    expect(config.dataDir).toMatch(/\/data$/);
    expect(config.compute.driver).toBe('local');
    expect(config.objectStore.kind).toBe('fs');
    expect(config.timing).toEqual({
      provisionTimeoutMs: 300_000,
      refreshTimeoutMs: 10_000,
      jobHeartbeatSeconds: 30,
    });
    expect(config.bundles).toEqual({ maxFileBytes: 100_000_000, maxTotalBytes: 2_000_000_000 });
    expect(config.providers.suite.clientId).toBeUndefined();
    expect(secrets.encryption).toBeUndefined();
    expect(Object.isFrozen(config.http)).toBe(true);
  });

  it('reads how many proxies to trust, at least one', () => {
    const { config } = loadConfig({ TRUST_PROXY: 'true', TRUSTED_PROXY_HOPS: '2' });
    expect(config.http).toMatchObject({ trustProxy: true, trustedProxyHops: 2 });
    expect(() => loadConfig({ TRUSTED_PROXY_HOPS: '0' })).toThrow(/TRUSTED_PROXY_HOPS/);
  });

  it('reads which header the proxies write the client address to, X-Forwarded-For by default', () => {
    expect(loadConfig({}).config.http.trustProxyHeader).toBe('x-forwarded-for');
    const { config } = loadConfig({ TRUST_PROXY: 'true', TRUST_PROXY_HEADER: 'forwarded' });
    expect(config.http.trustProxyHeader).toBe('forwarded');
    expect(() => loadConfig({ TRUST_PROXY_HEADER: 'x-real-ip' })).toThrow(/TRUST_PROXY_HEADER/);
  });

  it('uses PostgreSQL when DATABASE_URL is set and marks HTTPS public URLs for secure cookies', () => {
    const { config } = loadConfig({
      DATABASE_URL: 'postgres://u@h:5432/db',
      PUBLIC_URL: 'https://svc.example/',
    });
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://u@h:5432/db' });
    expect(config.http).toMatchObject({ publicUrl: 'https://svc.example', secureCookies: true });
  });

  it('serves Agents under AGENT_DOMAIN over HTTPS, else as subdomains of the public host', () => {
    expect(loadConfig({}).config.http.agentOrigin).toEqual({
      scheme: 'http',
      domain: 'localhost:8080',
    });
    expect(
      loadConfig({ PUBLIC_URL: 'https://svc.example', AGENT_DOMAIN: 'agents.svc.example' }).config
        .http.agentOrigin,
    ).toEqual({ scheme: 'https', domain: 'agents.svc.example' });
    expect(() => loadConfig({ AGENT_DOMAIN: 'https://agents.example' })).toThrow(ConfigError);
    // An IP address has no subdomains: Agents then live under localhost on the same port.
    expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080' }).config.http.agentOrigin).toEqual({
      scheme: 'http',
      domain: 'localhost:8080',
    });
  });

  it('reads the bundle limits and refuses ones that are not positive integers', () => {
    const { config } = loadConfig({
      BUNDLE_MAX_FILE_BYTES: '1000',
      BUNDLE_MAX_TOTAL_BYTES: '5000',
    });
    expect(config.bundles).toEqual({ maxFileBytes: 1000, maxTotalBytes: 5000 });
    expect(() => loadConfig({ BUNDLE_MAX_FILE_BYTES: '0' })).toThrow(/BUNDLE_MAX_FILE_BYTES/);
    expect(() => loadConfig({ BUNDLE_MAX_TOTAL_BYTES: '1.5' })).toThrow(/BUNDLE_MAX_TOTAL_BYTES/);
  });

  it('reports every problem at once', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        OBJECT_STORE: 'tape',
        PROVISION_TIMEOUT_MS: '-1',
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const names = (error as ConfigError).problems.map((p) => p.split(':')[0]);
      expect(names).toEqual(
        expect.arrayContaining(['PORT', 'DATABASE_URL', 'OBJECT_STORE', 'PROVISION_TIMEOUT_MS']),
      );
    }
  });

  it('checks fields that depend on each other, all together', () => {
    const error = (() => {
      try {
        loadConfig({ OBJECT_STORE: 's3', S3_ACCESS_KEY_ID: 'x', CODE_CLIENT_ID: 'id' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(error?.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^S3_BUCKET/),
        expect.stringMatching(/^S3_REGION/),
        expect.stringMatching(/^S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY/),
        expect.stringMatching(/^CODE_CLIENT_SECRET/),
      ]),
    );
  });

  it('needs both Stripe keys with BILLING_PROVIDER=stripe, and sends the key over HTTPS only (plain HTTP to this host)', () => {
    const keys = { STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' };
    expect(() => loadConfig({ BILLING_PROVIDER: 'stripe' })).toThrow(
      /STRIPE_SECRET_KEY: required[\s\S]*STRIPE_WEBHOOK_SECRET: required/,
    );
    expect(loadConfig({ BILLING_PROVIDER: 'stripe', ...keys }).config.billing.provider).toEqual({
      kind: 'stripe',
    });
    const local = { BILLING_PROVIDER: 'stripe', ...keys, STRIPE_API_URL: 'http://127.0.0.1:12111' };
    expect(loadConfig(local).config.billing.provider).toEqual({
      kind: 'stripe',
      apiUrl: 'http://127.0.0.1:12111',
    });
    expect(() =>
      loadConfig({ ...local, STRIPE_API_URL: 'http://stripe.internal.example:12111' }),
    ).toThrow(/STRIPE_API_URL/);
  });

  it('refuses to start in production without keys', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /ENCRYPTION_KEYS: required[\s\S]*HMAC_KEY: required/,
    );
  });

  it('refuses a cloud driver in production without the gateway CA, and takes it as PEM or files', async () => {
    const keys = { ENCRYPTION_KEYS: `k:${key(1)}`, HMAC_KEY: key(2) };
    for (const driver of [
      { COMPUTE_DRIVER: 'incus' },
      { COMPUTE_DRIVER: 'hetzner', HCLOUD_TOKEN: 't' },
    ]) {
      expect(() => loadConfig({ NODE_ENV: 'production', ...keys, ...driver })).toThrow(
        /GATEWAY_CA_CERT, GATEWAY_CA_KEY: required when NODE_ENV=production with COMPUTE_DRIVER=/,
      );
      const { secrets } = loadConfig({ NODE_ENV: 'production', ...keys, ...driver, ...ca });
      expect(secrets.gatewayCa).toEqual({ cert: ca.GATEWAY_CA_CERT, key: ca.GATEWAY_CA_KEY });
    }
    const certFile = path.join(tmpdir(), `svc-ca-${process.pid}.crt`);
    const keyFile = path.join(tmpdir(), `svc-ca-${process.pid}.key`);
    await writeFile(certFile, ca.GATEWAY_CA_CERT);
    await writeFile(keyFile, ca.GATEWAY_CA_KEY, { mode: 0o600 });
    const files = { GATEWAY_CA_CERT: certFile, GATEWAY_CA_KEY: keyFile };
    expect(loadConfig({ COMPUTE_DRIVER: 'incus', ...files }).secrets.gatewayCa?.cert).toBe(
      ca.GATEWAY_CA_CERT,
    );
    // A key that is not the certificate's, or half of the pair: named, never quoted.
    const other = await gatewayCaEnv();
    const mismatch = () => loadConfig({ ...ca, GATEWAY_CA_KEY: other.GATEWAY_CA_KEY });
    expect(mismatch).toThrow(/GATEWAY_CA_KEY: not the key of GATEWAY_CA_CERT's certificate/);
    expect(() => loadConfig({ GATEWAY_CA_CERT: certFile })).toThrow(/set both or neither/);
    try {
      mismatch();
    } catch (error) {
      expect(String(error)).not.toContain('PRIVATE KEY');
    }
  });

  it('refuses the local compute driver in production, named or by default', () => {
    const keys = { ENCRYPTION_KEYS: `k:${key(1)}`, HMAC_KEY: key(2) };
    for (const driver of [{ COMPUTE_DRIVER: 'local' }, {}]) {
      expect(() => loadConfig({ NODE_ENV: 'production', ...keys, ...driver })).toThrow(
        /COMPUTE_DRIVER: "local" is refused when NODE_ENV=production; its machines are not isolated/,
      );
    }
    // Outside production it stays the default.
    expect(loadConfig({ NODE_ENV: 'development', ...keys }).config.compute.driver).toBe('local');
  });

  it('refuses bad Hetzner lists, each named, rather than starting with a default', () => {
    const hetzner = { COMPUTE_DRIVER: 'hetzner', HCLOUD_TOKEN: 't' };
    expect(() => loadConfig({ ...hetzner, HCLOUD_GATEWAY_SOURCES: 'nowhere' })).toThrow(
      /HCLOUD_GATEWAY_SOURCES: not CIDRs: nowhere/,
    );
    expect(() => loadConfig({ ...hetzner, HCLOUD_LOCATIONS: 'us=hil' })).toThrow(
      /HCLOUD_LOCATIONS: give a location for eu/,
    );
    expect(() => loadConfig({ ...hetzner, HCLOUD_SERVER_TYPES: 'tiny-eu=cx22' })).toThrow(
      /HCLOUD_SERVER_TYPES: "tiny-eu" is not size-region/,
    );
  });

  it('configures the incus driver with its defaults, and production accepts it', () => {
    const keys = { ENCRYPTION_KEYS: `k:${key(1)}`, HMAC_KEY: key(2) };
    const { config } = loadConfig({
      NODE_ENV: 'production',
      ...keys,
      ...ca,
      COMPUTE_DRIVER: 'incus',
    });
    expect(config.compute).toEqual({
      driver: 'incus',
      socketPath: '/var/lib/incus/unix.socket',
      project: 'default',
      network: 'incusbr0',
      storagePool: 'svc',
      sizeFactor: 1,
      instanceType: 'container',
      agentImage: 'svc-agent',
      cliBuildDir: expect.stringMatching(/packages\/cli\/dist$/),
      serviceUrl: 'http://localhost:8080',
      egressAllow: [],
      warmPool: [],
    });
    const custom = loadConfig({
      COMPUTE_DRIVER: 'incus',
      INCUS_SOCKET: '/run/incus.sock',
      INCUS_PROJECT: 'svc',
      INCUS_NETWORK: 'svcbr0',
      INCUS_STORAGE_POOL: 'fast',
      INCUS_SIZE_FACTOR: '0.25',
      INCUS_AGENT_IMAGE: 'agent-2',
      INCUS_INSTANCE_TYPE: 'virtual-machine',
      INCUS_EGRESS_ALLOW: ' 10.20.0.0/16 , 169.254.169.254/32',
      INCUS_WARM_POOL: 'plain_vm:debian-12:small:eu=2, agent:medium:us=1,agent:large:eu=0',
      PUBLIC_URL: 'https://svc.example.com',
    }).config.compute;
    expect(custom).toEqual({
      driver: 'incus',
      socketPath: '/run/incus.sock',
      project: 'svc',
      network: 'svcbr0',
      storagePool: 'fast',
      sizeFactor: 0.25,
      instanceType: 'virtual-machine',
      agentImage: 'agent-2',
      cliBuildDir: expect.any(String),
      serviceUrl: 'https://svc.example.com',
      egressAllow: ['10.20.0.0/16', '169.254.169.254/32'],
      warmPool: [
        { kind: 'plain_vm', image: 'debian-12', size: 'small', region: 'eu', count: 2 },
        { kind: 'agent', size: 'medium', region: 'us', count: 1 },
      ],
    });
    // INCUS_WARM_POOL: cell=count, each problem named with the variable.
    for (const [pool, problem] of [
      ['agent:small:eu', /INCUS_WARM_POOL: "agent:small:eu" is not cell=count/],
      ['agent:tiny:eu=1', /INCUS_WARM_POOL: "tiny" in "agent:tiny:eu" is not a size/],
      ['plain_vm:debian-99:small:eu=1', /INCUS_WARM_POOL: "debian-99" .* is not an OS image/],
      ['plain_vm:small:eu=1', /INCUS_WARM_POOL: "plain_vm:small:eu" is not agent:<size>/],
      ['agent:small:eu=1,agent:small:eu=2', /INCUS_WARM_POOL: agent:small:eu is named twice/],
      ['agent:small:eu=51', /count from 0 to 50/],
    ] as const) {
      expect(() => loadConfig({ COMPUTE_DRIVER: 'incus', INCUS_WARM_POOL: pool })).toThrow(problem);
    }
    // INCUS_EGRESS_ALLOW: IPv4 CIDRs, each problem named with the variable.
    for (const [allow, problem] of [
      ['10.0.0.0/33', /INCUS_EGRESS_ALLOW: 10\.0\.0\.0\/33 is not an IPv4 CIDR/],
      ['10.0.0.0/8,intranet', /INCUS_EGRESS_ALLOW: intranet is not an IPv4 CIDR/],
      ['10.1.0.0/8', /INCUS_EGRESS_ALLOW: 10\.1\.0\.0\/8 has host bits set: write 10\.0\.0\.0\/8/],
      ['fd00::/8', /INCUS_EGRESS_ALLOW: fd00::\/8: IPv4 ranges only/],
    ] as const) {
      expect(() => loadConfig({ COMPUTE_DRIVER: 'incus', INCUS_EGRESS_ALLOW: allow })).toThrow(
        problem,
      );
    }
    for (const factor of ['0', '-1', '2', 'half']) {
      expect(() => loadConfig({ COMPUTE_DRIVER: 'incus', INCUS_SIZE_FACTOR: factor })).toThrow(
        /INCUS_SIZE_FACTOR/,
      );
    }
    expect(() => loadConfig({ COMPUTE_DRIVER: 'kvm' })).toThrow(/COMPUTE_DRIVER/);
    expect(() => loadConfig({ COMPUTE_DRIVER: 'incus', INCUS_URL: 'http://incus:8443' })).toThrow(
      /INCUS_URL/,
    );
    expect(() => loadConfig({ COMPUTE_DRIVER: 'incus', INCUS_URL: 'https://incus:8443' })).toThrow(
      /INCUS_CLIENT_CERT, INCUS_CLIENT_KEY: required when INCUS_URL is set/,
    );
    const remote = loadConfig({
      COMPUTE_DRIVER: 'incus',
      INCUS_URL: 'https://incus.example:8443',
      INCUS_CLIENT_CERT: '/etc/svc/incus.crt',
      INCUS_CLIENT_KEY: '/etc/svc/incus.key',
    }).config.compute;
    expect(remote).toMatchObject({
      remote: {
        url: 'https://incus.example:8443',
        clientCertFile: '/etc/svc/incus.crt',
        clientKeyFile: '/etc/svc/incus.key',
      },
    });
  });

  it('reads outside SSH on Incus: one address or one per cluster member, and a port range', () => {
    const incus = (env: Record<string, string>) =>
      loadConfig({ COMPUTE_DRIVER: 'incus', ...env }).config.compute;
    expect(incus({})).not.toHaveProperty('publicSsh');
    expect(incus({ INCUS_PUBLIC_ADDRESS: '203.0.113.5' })).toMatchObject({
      publicSsh: {
        addresses: { '*': '203.0.113.5' },
        ports: { first: 22000, last: 22999 },
        holdMs: 24 * 3_600_000,
      },
    });
    expect(
      incus({ INCUS_PUBLIC_ADDRESS: '203.0.113.5', INCUS_SSH_PORT_HOLD_HOURS: '0' }),
    ).toMatchObject({ publicSsh: { holdMs: 0 } });
    expect(() =>
      incus({ INCUS_PUBLIC_ADDRESS: '203.0.113.5', INCUS_SSH_PORT_HOLD_HOURS: 'a day' }),
    ).toThrow(/INCUS_SSH_PORT_HOLD_HOURS/);
    expect(
      incus({
        INCUS_PUBLIC_ADDRESS: 'member1=203.0.113.5, member2=203.0.113.6',
        INCUS_SSH_PORTS: '2200-2299',
      }),
    ).toMatchObject({
      publicSsh: {
        addresses: { member1: '203.0.113.5', member2: '203.0.113.6' },
        ports: { first: 2200, last: 2299 },
      },
    });
    for (const address of [
      'example.com',
      '2001:db8::1',
      '127.0.0.1',
      '0.0.0.0',
      'm1=',
      'm1=1.2.3.4,m1=1.2.3.5',
    ]) {
      expect(() => incus({ INCUS_PUBLIC_ADDRESS: address }), address).toThrow(
        /INCUS_PUBLIC_ADDRESS: /,
      );
    }
    for (const ports of ['22999-22000', '0-10', '22000-70000', 'ssh', '22000-']) {
      expect(
        () => incus({ INCUS_PUBLIC_ADDRESS: '203.0.113.5', INCUS_SSH_PORTS: ports }),
        ports,
      ).toThrow(/INCUS_SSH_PORTS: .* is not a port range such as 22000-22999/);
    }
  });

  it('parses key rings and never puts key material in messages', () => {
    const raw = `old:${key(1)},new:${key(2)}`;
    const { secrets } = loadConfig({ ENCRYPTION_KEYS: raw, HMAC_KEY: key(3) });
    expect(secrets.encryption?.primaryId).toBe('old');
    expect([...(secrets.encryption?.keys.keys() ?? [])]).toEqual(['old', 'new']);
    const short = Buffer.alloc(16, 9).toString('base64');
    try {
      loadConfig({ ENCRYPTION_KEYS: `k:${short}`, HMAC_KEY: short });
      expect.unreachable();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/ENCRYPTION_KEYS: key "k" must be 32 bytes/);
      expect(message).toMatch(/HMAC_KEY: must be at least 32 bytes/);
      expect(message).not.toContain(short);
    }
  });

  it('sends mail through SMTP_URL with its password among the secrets, else into DATA_DIR/outbox', () => {
    const outbox = loadConfig({ DATA_DIR: '/srv/svc', PUBLIC_URL: 'https://svc.example' });
    expect(outbox.config.mail).toEqual({
      from: 'svc <noreply@svc.example>',
      emailVerification: 'optional',
      transport: { kind: 'outbox', dir: '/srv/svc/outbox' },
    });
    expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080' }).config.mail.from).toBe(
      'svc <noreply@localhost>',
    );
    const smtp = loadConfig({
      SMTP_URL: 'smtp://mailer:p%40ss-word@mail.example:587?tls.servername=mx.example',
      MAIL_FROM: 'Acme Ops <ops@acme.example>',
    });
    expect(smtp.config.mail).toEqual({
      from: 'Acme Ops <ops@acme.example>',
      emailVerification: 'optional',
      transport: {
        kind: 'smtp',
        url: 'smtp://mailer@mail.example:587?tls.servername=mx.example&requireTLS=true',
      },
    });
    expect(smtp.secrets.smtpPassword).toBe('p%40ss-word');
    expect(JSON.stringify(smtp.config)).not.toContain('ss-word');
  });

  it('sends a login over smtp:// to another host only after STARTTLS, never in clear', () => {
    const urlOf = (SMTP_URL: string) => {
      const { transport } = loadConfig({ SMTP_URL }).config.mail;
      return transport.kind === 'smtp' ? transport.url : undefined;
    };
    // Without it nodemailer skips STARTTLS when the offer is missing (stripped on the way).
    expect(urlOf('smtp://u:p@mail.example:587')).toBe('smtp://u@mail.example:587?requireTLS=true');
    expect(urlOf('smtp://u:p@mail.example:587?requireTLS=false')).toBe(
      'smtp://u@mail.example:587?requireTLS=true',
    );
    // TLS from the start, no login, or this host: as written.
    expect(urlOf('smtps://u:p@mail.example:465')).toBe('smtps://u@mail.example:465');
    expect(urlOf('smtp://mail.example:25')).toBe('smtp://mail.example:25');
    expect(urlOf('smtp://u:p@127.0.0.1:2525')).toBe('smtp://u@127.0.0.1:2525');
    expect(urlOf('smtp://u:p@localhost:2525')).toBe('smtp://u@localhost:2525');
    expect(urlOf('smtp://u:p@[::1]:2525')).toBe('smtp://u@[::1]:2525');
  });

  it('requires a verified e-mail by default in production only, and as EMAIL_VERIFICATION says', () => {
    const keys = { ENCRYPTION_KEYS: `k:${key(1)}`, HMAC_KEY: key(2) };
    const production = { NODE_ENV: 'production', COMPUTE_DRIVER: 'incus', ...keys, ...ca } as const;
    expect(loadConfig(production).config.mail.emailVerification).toBe('required');
    expect(loadConfig({}).config.mail.emailVerification).toBe('optional');
    expect(
      loadConfig({ ...production, EMAIL_VERIFICATION: 'optional' }).config.mail.emailVerification,
    ).toBe('optional');
    expect(loadConfig({ EMAIL_VERIFICATION: 'required' }).config.mail.emailVerification).toBe(
      'required',
    );
    expect(() => loadConfig({ EMAIL_VERIFICATION: 'sometimes' })).toThrow(/EMAIL_VERIFICATION/);
  });

  it('refuses an SMTP_URL of another scheme and a MAIL_FROM that is not one mailbox', () => {
    for (const env of [
      { SMTP_URL: 'https://mail.example' },
      { MAIL_FROM: 'no address' },
      { MAIL_FROM: 'a@example.com, b@example.com' },
    ]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(
        new RegExp(Object.keys(env)[0] as string),
      );
    }
  });

  it('keeps secrets out of the configuration and out of printed output', () => {
    const { config, secrets: raw } = loadConfig({
      ENCRYPTION_KEYS: `a:${key(4)}`,
      HMAC_KEY: key(5),
      SUITE_CLIENT_ID: 'id',
      SUITE_CLIENT_SECRET: 'shh-client-secret',
      METRICS_TOKEN: 'shh-metrics-token',
    });
    expect(JSON.stringify(config)).not.toContain('shh-client-secret');
    expect(JSON.stringify(config)).not.toContain('shh-metrics-token');
    expect(raw.metricsToken).toBe('shh-metrics-token');
    expect(JSON.stringify(config)).not.toContain(key(4));
    const secrets = new Secrets(
      { primaryId: 'a', keys: new Map([['a', Buffer.alloc(32)]]) },
      Buffer.alloc(32),
      { suite: 'shh-client-secret' },
    );
    expect(inspect(secrets)).toBe('[secrets]');
    expect(JSON.stringify({ secrets })).toBe('{"secrets":"[secrets]"}');
  });
});
