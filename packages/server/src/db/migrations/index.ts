import type { Migration } from 'kysely';
import * as m0001 from './0001-accounts.js';
import * as m0002 from './0002-agents.js';
import * as m0003 from './0003-slots-clones.js';
import * as m0004 from './0004-vault.js';
import * as m0005 from './0005-plain-vms.js';
import * as m0006 from './0006-app-connections.js';
import * as m0007 from './0007-bundles.js';
import * as m0008 from './0008-agent-gateway.js';
import * as m0009 from './0009-app-oauth-hardening.js';
import * as m0010 from './0010-attempt-backoff.js';
import * as m0011 from './0011-firewall-lease.js';
import * as m0012 from './0012-drop-agent-gateway-port.js';
import * as m0013 from './0013-bundle-search.js';
import * as m0014 from './0014-agent-adoption.js';
import * as m0015 from './0015-session-details.js';
import * as m0016 from './0016-account-links-tokens.js';
import * as m0017 from './0017-billing.js';
import * as m0018 from './0018-email-change.js';
import * as m0019 from './0019-audit-actor.js';
import * as m0020 from './0020-agent-idle-stop.js';
import * as m0021 from './0021-notices.js';
import * as m0022 from './0022-agent-ports.js';
import * as m0023 from './0023-snapshots.js';
import * as m0024 from './0024-snapshot-usage.js';
import * as m0025 from './0025-disk-operation-since.js';

/**
 * Every migration, in order. Names sort in the order they run; add the next file here by hand
 * (no directory scanning, so bundling and ordering stay obvious).
 */
export const migrations: Readonly<Record<string, Migration>> = {
  '0001-accounts': m0001,
  '0002-agents': m0002,
  '0003-slots-clones': m0003,
  '0004-vault': m0004,
  '0005-plain-vms': m0005,
  '0006-app-connections': m0006,
  '0007-bundles': m0007,
  '0008-agent-gateway': m0008,
  '0009-app-oauth-hardening': m0009,
  '0010-attempt-backoff': m0010,
  '0011-firewall-lease': m0011,
  '0012-drop-agent-gateway-port': m0012,
  '0013-bundle-search': m0013,
  '0014-agent-adoption': m0014,
  '0015-session-details': m0015,
  '0016-account-links-tokens': m0016,
  '0017-billing': m0017,
  '0018-email-change': m0018,
  '0019-audit-actor': m0019,
  '0020-agent-idle-stop': m0020,
  '0021-notices': m0021,
  '0022-agent-ports': m0022,
  '0023-snapshots': m0023,
  '0024-snapshot-usage': m0024,
  '0025-disk-operation-since': m0025,
};
