// The package's public surface: the only barrel file in the project.
import { accountEndpoints } from './accounts.js';
import { agentEndpoints } from './agents.js';
import { billingEndpoints } from './billing.js';
import type { Endpoint } from './endpoint.js';
import { healthEndpoints } from './health.js';
import { vaultEndpoints } from './vault.js';

export * from './accounts.js';
export * from './agents.js';
export * from './billing.js';
export * from './common.js';
export * from './endpoint.js';
export * from './errors.js';
export * from './firewall.js';
export * from './health.js';
export * from './openapi.js';
export * from './vault.js';

/** Every endpoint of the service; the OpenAPI document lists exactly these. */
export const allEndpoints: readonly Endpoint[] = [
  ...healthEndpoints,
  ...accountEndpoints,
  ...agentEndpoints,
  ...billingEndpoints,
  ...vaultEndpoints,
];
