import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INCUS_POOL, INCUS_SOCKET, requireIncus } from '../../../../test/incus.js';
import { createComputeDriver } from '../create-compute-driver.js';

// `INCUS_URL`: the driver on the HTTPS API, as for a remote server or a cluster, against this
// host's daemon listening on loopback (core.https_address, set for the test's length and put back
// after, since port 8443 of loopback is a gateway's port in other tests), with a client
// certificate made here and trusted by the daemon for the test's length.

const run = promisify(execFile);
const HTTPS_ADDRESS = '127.0.0.1:8443';

async function certificate(dir: string, name: string) {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:secp384r1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
  ]);
  return { cert, key };
}

describe('the incus driver on a remote API (INCUS_URL)', () => {
  let dir: string;
  let trusted: { cert: string; key: string };
  let stranger: { cert: string; key: string };
  let fingerprint: string;
  let previousAddress: string | undefined;

  beforeAll(async () => {
    requireIncus();
    previousAddress = (await run('incus', ['config', 'get', 'core.https_address'])).stdout.trim();
    await run('incus', ['config', 'set', 'core.https_address', HTTPS_ADDRESS]);
    dir = await mkdtemp(path.join(tmpdir(), 'svc-incus-remote-'));
    trusted = await certificate(dir, 'svc-remote-test');
    stranger = await certificate(dir, 'svc-stranger');
    await run('incus', ['config', 'trust', 'add-certificate', trusted.cert]);
    const der = new X509Certificate(await readFile(trusted.cert)).raw;
    fingerprint = createHash('sha256').update(der).digest('hex');
  });

  afterAll(async () => {
    if (fingerprint) await run('incus', ['config', 'trust', 'remove', fingerprint]).catch(() => {});
    if (dir) await rm(dir, { recursive: true, force: true });
    if (previousAddress !== undefined) {
      await run(
        'incus',
        ['config', previousAddress ? 'set' : 'unset', 'core.https_address'].concat(
          previousAddress ? [previousAddress] : [],
        ),
      );
    }
  });

  const driverWith = (client: { cert: string; key: string }, serverCertFile?: string) =>
    createComputeDriver(
      {
        driver: 'incus',
        socketPath: '/nonexistent/so-only-the-url-can-answer',
        remote: {
          url: `https://${HTTPS_ADDRESS}`,
          clientCertFile: client.cert,
          clientKeyFile: client.key,
          serverCertFile: serverCertFile ?? '/var/lib/incus/server.crt',
        },
        project: 'default',
        network: 'incusbr0',
        storagePool: INCUS_POOL,
        sizeFactor: 0.25,
        instanceType: 'container',
        agentImage: 'svc-agent',
        cliBuildDir: dir,
        serviceUrl: 'http://localhost:8080',
        egressAllow: [],
        warmPool: [],
      },
      dir,
      pino({ level: 'silent' }),
      { hmacKey: Buffer.alloc(32, 2) },
    );

  it('talks to the daemon over HTTPS with a trusted client certificate', async () => {
    expect(INCUS_SOCKET).toBeTruthy();
    const driver = await driverWith(trusted);
    try {
      expect(driver.name).toBe('incus');
      expect(Array.isArray(await driver.listServers({ managedBy: 'nobody' }))).toBe(true);
      expect(await driver.getServer('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    } finally {
      await driver.close();
    }
  });

  it('refuses at start, naming the URL, when the daemon does not trust the certificate', async () => {
    await expect(driverWith(stranger)).rejects.toThrow(
      `Incus at https://${HTTPS_ADDRESS} does not trust this client certificate`,
    );
  });

  it('refuses a server whose certificate is not the one given, naming the URL', async () => {
    await expect(driverWith(trusted, stranger.cert)).rejects.toThrow(
      new RegExp(`Incus is unreachable at https://${HTTPS_ADDRESS.replace(/\./g, '\\.')}`),
    );
  });
});
