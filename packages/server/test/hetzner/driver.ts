import { pushPrivateKey } from '@svc/contract/agent-env-push';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import {
  HetznerComputeDriver,
  type HetznerDriverOptions,
} from '../../src/adapters/compute/hetzner/hetzner-compute-driver.js';
import { STAND_IN_PROBES } from '../test-compute-driver.js';
import { createTestContext, signUpUser, TEST_ENV } from '../test-context.js';
import type { Conformance } from './conformance.js';
import { type StandInOptions, startHetznerStandIn } from './stand-in.js';
import { conformanceOrWarn, expectConformant } from './test-helpers.js';

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

/** A driver on `standIn`, connected, signing pushes with the test service's key. */
export async function hetznerDriver(
  standIn: { url: string; token: string },
  extra: Partial<HetznerDriverOptions> = {},
) {
  const driver = new HetznerComputeDriver(
    {
      ...DRIVER_OPTIONS,
      endpoint: standIn.url,
      token: standIn.token,
      pushKey: pushPrivateKey(Buffer.from(TEST_ENV.HMAC_KEY, 'base64')),
      ...extra,
    },
    pino({ level: 'silent' }),
  );
  await driver.connect();
  return driver;
}

/** A stand-in checked against Hetzner's description, and a connected driver on it. */
export async function hetznerDriverOnStandIn(options: StandInOptions = {}) {
  const conformance: Conformance | undefined = await conformanceOrWarn();
  const standIn = await startHetznerStandIn({ ...options, ...(conformance && { conformance }) });
  return { standIn, driver: await hetznerDriver(standIn), conformance };
}

/**
 * A conformance-checked stand-in and a driver on it for the enclosing file or describe block,
 * filled in before its tests; afterwards every exchange must have matched Hetzner's description.
 */
export function hetznerDriverForTests() {
  const setup = {} as Awaited<ReturnType<typeof hetznerDriverOnStandIn>>;
  beforeAll(async () => {
    Object.assign(setup, await hetznerDriverOnStandIn());
  });
  afterAll(async () => {
    expectConformant(setup.conformance);
    await setup.standIn.close();
  });
  return setup;
}

/**
 * A test context whose machines the hetzner driver makes on a conformance-checked stand-in, and
 * a signed-up client; `close` also asserts that every exchange matched Hetzner's description.
 */
export async function hetznerTestContext(options: StandInOptions = {}) {
  const hetzner = await hetznerDriverOnStandIn(options);
  const t = await createTestContext('pglite', {
    overrides: { compute: hetzner.driver, machineProbes: STAND_IN_PROBES },
  });
  const client = t.newClient();
  await signUpUser(client);
  return {
    t,
    client,
    hetzner,
    async close() {
      await t.close();
      expectConformant(hetzner.conformance);
      await hetzner.standIn.close();
    },
  };
}
