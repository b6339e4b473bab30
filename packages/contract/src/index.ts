// The package's public surface: the only barrel file in the project.
import { accountEndpoints } from './accounts.js';
import { agentPortEndpoints } from './agent-ports.js';
import { agentEndpoints } from './agents.js';
import { apiTokenEndpoints } from './api-tokens.js';
import { appEndpoints } from './apps.js';
import { billingEndpoints } from './billing.js';
import { bundlePageEndpoints } from './bundle-pages.js';
import { bundleEndpoints } from './bundles.js';
import { dashboardEndpoints } from './dashboard.js';
import { emailLinkEndpoints } from './email-links.js';
import type { Endpoint } from './endpoint.js';
import { healthEndpoints } from './health.js';
import { invitationEndpoints } from './invitations.js';
import { noticeEndpoints } from './notices.js';
import { plainVmEndpoints } from './plain-vms.js';
import { snapshotEndpoints } from './snapshots.js';
import { vaultEndpoints } from './vault.js';

export * from './accounts.js';
export * from './agent-ports.js';
export * from './agents.js';
export * from './api-tokens.js';
export * from './apps.js';
export * from './billing.js';
export * from './bundle-manifest.js';
export * from './bundle-pages.js';
export * from './bundles.js';
export * from './common.js';
export * from './dashboard.js';
export * from './email-links.js';
export * from './endpoint.js';
export * from './endpoint-call.js';
export * from './errors.js';
export * from './firewall.js';
export * from './health.js';
export * from './invitations.js';
export * from './issue-messages.js';
export * from './lifecycle.js';
export * from './notices.js';
export * from './openapi.js';
export * from './plain-vms.js';
export * from './request-input.js';
export * from './roles.js';
export * from './snapshots.js';
export * from './status-reasons.js';
export * from './subscription-moves.js';
export * from './vault.js';

/** Every endpoint of the service; the OpenAPI document lists exactly these. */
export const allEndpoints: readonly Endpoint[] = [
  ...healthEndpoints,
  ...accountEndpoints,
  ...emailLinkEndpoints,
  ...invitationEndpoints,
  ...apiTokenEndpoints,
  ...noticeEndpoints,
  ...agentEndpoints,
  ...agentPortEndpoints,
  ...billingEndpoints,
  ...plainVmEndpoints,
  ...snapshotEndpoints,
  ...vaultEndpoints,
  ...appEndpoints,
  ...bundleEndpoints,
  ...bundlePageEndpoints,
  ...dashboardEndpoints,
];
