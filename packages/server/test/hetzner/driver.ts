import pino from 'pino';
import { HetznerComputeDriver } from '../../src/adapters/compute/hetzner/hetzner-compute-driver.js';
import type { Conformance } from './conformance.js';
import { type StandInOptions, startHetznerStandIn } from './stand-in.js';
import { conformanceOrWarn } from './test-helpers.js';

/** The environment a service process needs to run on the stand-in. */
export const hetznerEnv = (standIn: { url: string; token: string }) => ({
  COMPUTE_DRIVER: 'hetzner',
  HCLOUD_ENDPOINT: standIn.url,
  HCLOUD_TOKEN: standIn.token,
});

export const DRIVER_OPTIONS = {
  locations: { us: 'hil', eu: 'hel1' },
  serverTypes: {},
  agentImage: 'debian-12',
  gatewaySources: ['198.51.100.7/32'],
} as const;

/** A stand-in checked against Hetzner's description, and a connected driver on it. */
export async function hetznerDriverOnStandIn(options: StandInOptions = {}) {
  const conformance: Conformance | undefined = await conformanceOrWarn();
  const standIn = await startHetznerStandIn({ ...options, ...(conformance && { conformance }) });
  const driver = new HetznerComputeDriver(
    { ...DRIVER_OPTIONS, endpoint: standIn.url, token: standIn.token },
    pino({ level: 'silent' }),
  );
  await driver.connect();
  return { standIn, driver, conformance };
}
