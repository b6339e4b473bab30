import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pushPrivateKey } from '@svc/contract/agent-env-push';
import type { ComputeConfig } from '../../config/config.js';
import type { Secrets } from '../../config/secrets.js';
import type { Logger } from '../../logger.js';
import type { ComputeDriver } from './compute-driver.js';

/**
 * The configured driver: `local` (embedded default, development only), `incus`, whose daemon
 * must answer now (and trust us, when remote), or `hetzner`, whose API must take the token and
 * sell a server type for every size: a service that cannot make machines says so at start,
 * naming the socket or URL. Only the configured driver's code is loaded (the service imports this
 * before it listens).
 */
export async function createComputeDriver(
  config: ComputeConfig,
  dataDir: string,
  log: Logger,
  secrets: Pick<Secrets, 'hcloudToken' | 'hmacKey' | 'gatewayCa'>,
  /** `hostGuard: false`: leave the host's firewall table alone (`IncusDriverOptions.hostGuard`). */
  process: { readonly hostGuard?: boolean } = {},
): Promise<ComputeDriver> {
  if (config.driver === 'local') {
    const { LocalComputeDriver } = await import('./local-compute-driver.js');
    return new LocalComputeDriver(path.join(dataDir, 'machines'), log);
  }
  if (config.driver === 'hetzner') {
    if (!secrets.hcloudToken) throw new Error('HCLOUD_TOKEN: required when COMPUTE_DRIVER=hetzner');
    const { HetznerComputeDriver } = await import('./hetzner/hetzner-compute-driver.js');
    const { enrollSecretOf } = await import('./hetzner/gateway-exchange.js');
    const { driver: _driver, ...options } = config;
    const driver = new HetznerComputeDriver(
      {
        ...options,
        token: secrets.hcloudToken,
        pushKey: pushPrivateKey(secrets.hmacKey),
        ...(secrets.gatewayCa && { gatewayCa: secrets.gatewayCa }),
        enrollSecret: enrollSecretOf(secrets.hmacKey),
      },
      log,
    );
    await driver.connect();
    return driver;
  }
  const remote = config.remote && {
    url: config.remote.url,
    cert: await readFile(config.remote.clientCertFile, 'utf8'),
    key: await readFile(config.remote.clientKeyFile, 'utf8'),
    ...(config.remote.serverCertFile && {
      serverCert: await readFile(config.remote.serverCertFile, 'utf8'),
    }),
  };
  const { remote: _files, ...options } = config;
  const { IncusComputeDriver } = await import('./incus/incus-compute-driver.js');
  const driver = new IncusComputeDriver(
    {
      ...options,
      ...(remote && { remote }),
      ...(secrets.gatewayCa && { gatewayCa: secrets.gatewayCa }),
      ...(process.hostGuard === false && { hostGuard: false }),
    },
    log,
  );
  try {
    await driver.connect();
  } catch (error) {
    await driver.close();
    throw error;
  }
  return driver;
}
