import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ComputeConfig } from '../../config/config.js';
import type { Logger } from '../../logger.js';
import type { ComputeDriver } from './compute-driver.js';
import { IncusComputeDriver } from './incus/incus-compute-driver.js';
import { LocalComputeDriver } from './local-compute-driver.js';

/**
 * The configured driver: `local` (embedded default, development only) or `incus`, whose daemon
 * must answer now (and trust us, when remote), so a service that cannot make machines says so at
 * start, naming the socket or URL.
 */
export async function createComputeDriver(
  config: ComputeConfig,
  dataDir: string,
  log: Logger,
): Promise<ComputeDriver> {
  if (config.driver === 'local') return new LocalComputeDriver(path.join(dataDir, 'machines'), log);
  const remote = config.remote && {
    url: config.remote.url,
    cert: await readFile(config.remote.clientCertFile, 'utf8'),
    key: await readFile(config.remote.clientKeyFile, 'utf8'),
    ...(config.remote.serverCertFile && {
      serverCert: await readFile(config.remote.serverCertFile, 'utf8'),
    }),
  };
  const { remote: _files, ...options } = config;
  const driver = new IncusComputeDriver({ ...options, ...(remote && { remote }) }, log);
  try {
    await driver.connect();
  } catch (error) {
    await driver.close();
    throw error;
  }
  return driver;
}
