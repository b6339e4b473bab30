import { z } from 'zod';
import { AdoptedFrom, BundleAddress, CredentialKey } from './bundle-manifest.js';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';
import { MachineState } from './lifecycle.js';
import { Backups, BackupsSettings, DiskOperation } from './snapshots.js';
import { STATUS_REASON_DESCRIPTION } from './status-reasons.js';

export const Size = z.enum(['small', 'medium', 'large']);
export type Size = z.infer<typeof Size>;
export const Region = z.enum(['us', 'eu']);
export type Region = z.infer<typeof Region>;
export const BillingType = z.enum(['metered', 'subscription']);
export type BillingType = z.infer<typeof BillingType>;
export const Cohort = z.enum(['current', 'legacy']);
export type Cohort = z.infer<typeof Cohort>;

/**
 * vCPU, RAM and disk per size and region: what a server of that size has on the cloud drivers.
 * A driver that sets limits of its own (Incus, scaled by `INCUS_SIZE_FACTOR` on small hosts)
 * reports them beside these as the machine's `limits`.
 */
export const SIZE_SPECS: Readonly<
  Record<Size, Readonly<Record<Region, { vcpu: number; ramGb: number; diskGb: number }>>>
> = {
  small: { us: { vcpu: 3, ramGb: 4, diskGb: 80 }, eu: { vcpu: 2, ramGb: 4, diskGb: 80 } },
  medium: { us: { vcpu: 4, ramGb: 8, diskGb: 160 }, eu: { vcpu: 4, ramGb: 8, diskGb: 160 } },
  large: { us: { vcpu: 8, ramGb: 16, diskGb: 240 }, eu: { vcpu: 8, ramGb: 16, diskGb: 320 } },
};

/** The size table's numbers for one size and region (a machine's `specs`). */
export const SizeSpecs = z.object({ vcpu: z.number(), ramGb: z.number(), diskGb: z.number() });
export type SizeSpecs = z.infer<typeof SizeSpecs>;

/**
 * What the machine's compute driver gives it where the driver sets limits of its own: vCPUs, RAM
 * in MiB, disk in GiB. Absent where the driver sets none (local) or gives the size table's.
 */
export const MachineLimits = z
  .object({ vcpu: z.number().int(), ramMb: z.number().int(), diskGb: z.number().int() })
  .meta({
    description:
      "The machine's actual limits as its compute driver applies them (RAM in MiB, disk in GiB), where they are the driver's own: the incus driver scales the size table by INCUS_SIZE_FACTOR. Absent on drivers that give the size table's numbers or set no limits.",
  });
export type MachineLimits = z.infer<typeof MachineLimits>;

/** Sizes in increasing order: a clone may keep or raise its source's size, never lower it. */
export const SIZE_ORDER: readonly Size[] = ['small', 'medium', 'large'];

/**
 * The subdomain stem of an Agent name: lower-cased, every run of characters outside `[a-z0-9]`
 * one `-`, no leading or trailing `-`. Empty means the name cannot make a subdomain.
 */
export function subdomainStem(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export const AgentName = z
  .string()
  .trim()
  .min(1, 'Give the Agent a name')
  .max(30, 'Use at most 30 characters')
  .refine((name) => subdomainStem(name) !== '', 'Use at least one letter or digit');

/** The longest an Agent may sit unused before the service stops it: a week, in minutes. */
export const IDLE_STOP_MAX_MINUTES = 10_080;

/**
 * Minutes without a person's activity (requests through the edge, an open terminal or editor)
 * after which the service stops a running Agent; `0`: never.
 */
export const IdleStopMinutes = z
  .number()
  .int('Use whole minutes')
  .min(0, 'Use 0 (never) or more minutes')
  .max(IDLE_STOP_MAX_MINUTES, `Use at most ${IDLE_STOP_MAX_MINUTES} minutes (a week)`)
  .meta({
    description:
      "Minutes without a person's activity (requests through the Agent's URL, an open terminal or editor) after which the service stops the running Agent; 0 = never. Default: the service's AGENT_IDLE_STOP_MINUTES.",
  });

/** Why a stopped Agent was stopped by the service rather than by a person. */
export const StoppedReason = z.enum(['idle']);
export type StoppedReason = z.infer<typeof StoppedReason>;

export const Agent = z.object({
  id: Id,
  name: z.string(),
  size: Size,
  region: Region,
  billingType: BillingType,
  status: MachineState,
  diskOperation: DiskOperation,
  provider: z.string(),
  accountId: Id,
  cohort: Cohort,
  subdomain: z.string(),
  url: z.string(),
  specs: SizeSpecs,
  limits: MachineLimits.optional(),
  statusReason: z.string().nullable().meta({ description: STATUS_REASON_DESCRIPTION }),
  idleStopMinutes: IdleStopMinutes,
  backups: Backups,
  stoppedReason: StoppedReason.nullable().meta({
    description:
      'While the Agent is `stopping` or `stopped`: `idle` when the service stopped it because nobody used it for `idleStopMinutes`; `null` when a person stopped it, and in every other state.',
  }),
  /** The bundle version its home was adopted from, if it was. */
  adoptedFrom: AdoptedFrom.nullable(),
  /** Credentials the bundle names that the adopter left unset (they are not in `~/.openclaw/.env`). */
  credentialsToSet: z.array(z.string()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Agent = z.infer<typeof Agent>;

/** A credential's value as an adopter sets it: one line, written to `~/.openclaw/.env`. */
export const CredentialValue = z
  .string()
  .max(10_000, 'Use at most 10,000 characters')
  .refine((v) => !/[\r\n\0]/.test(v), 'A credential value is one line')
  .refine(
    (v) => ["'", '"', '`'].some((quote) => !v.includes(quote)),
    'A credential value cannot hold all of \', " and `',
  );

/** Create the Agent from a published bundle: its home starts as the bundle's files. */
export const AgentSource = z.strictObject({
  bundle: BundleAddress,
  /** The latest version when absent. */
  version: z.number().int().positive().optional(),
  /** Values of the bundle's credentials, by key; sent once, kept sealed until provisioning. */
  credentials: z.record(CredentialKey, CredentialValue).optional(),
});
export type AgentSource = z.infer<typeof AgentSource>;

const AgentParams = z.object({ id: Id });
const lifecycleErrors = ['invalid_state'] as const;

export const createAgent = defineEndpoint({
  id: 'createAgent',
  method: 'POST',
  path: '/api/agents',
  auth: 'session',
  tag: 'agents',
  summary: 'Create an Agent; it is provisioned in the background (poll its detail).',
  body: z.object({
    name: AgentName,
    size: Size,
    region: Region,
    billingType: BillingType,
    accountId: Id.optional(),
    source: AgentSource.optional(),
    idleStopMinutes: IdleStopMinutes.optional(),
  }),
  response: { status: 201, body: Agent },
  errors: ['subscription_required', 'not_found', 'email_unverified'],
});

export const listAgents = defineEndpoint({
  id: 'listAgents',
  method: 'GET',
  path: '/api/agents',
  auth: 'session',
  tag: 'agents',
  summary: 'The Agents of one account (`accountId`), or of every account the caller belongs to.',
  query: z.object({ accountId: Id.optional() }),
  response: { status: 200, body: z.array(Agent) },
  errors: [],
});

export const getAgent = defineEndpoint({
  id: 'getAgent',
  method: 'GET',
  path: '/api/agents/{id}',
  auth: 'session',
  tag: 'agents',
  summary: 'The Agent detail.',
  params: AgentParams,
  response: { status: 200, body: Agent },
  errors: [],
});

// Each caller writes its path out whole, so a search for the URL finds its endpoint.
const lifecycle = (id: string, path: string, summary: string) =>
  defineEndpoint({
    id,
    method: 'POST',
    path,
    auth: 'session',
    tag: 'agents',
    summary,
    params: AgentParams,
    response: { status: 200, body: Agent },
    errors: lifecycleErrors,
  });

export const startAgent = lifecycle(
  'startAgent',
  '/api/agents/{id}/start',
  'Start a stopped Agent.',
);
export const stopAgent = lifecycle(
  'stopAgent',
  '/api/agents/{id}/stop',
  'Stop a running Agent; its disk is kept.',
);
export const restartAgent = lifecycle(
  'restartAgent',
  '/api/agents/{id}/restart',
  'Power-cycle a running Agent.',
);

export const deleteAgent = defineEndpoint({
  id: 'deleteAgent',
  method: 'DELETE',
  path: '/api/agents/{id}',
  auth: 'session',
  tag: 'agents',
  summary: 'Destroy an Agent (running, stopped or error); teardown is asynchronous.',
  params: AgentParams,
  response: { status: 200, body: Agent },
  errors: lifecycleErrors,
});

export const cloneAgent = defineEndpoint({
  id: 'cloneAgent',
  method: 'POST',
  path: '/api/agents/{id}/clone',
  auth: 'session',
  tag: 'agents',
  summary:
    'Clone a running or stopped current-cohort Agent: same region and provider, size never below the source. Into another account only for an owner or admin of the source account.',
  params: AgentParams,
  body: z.object({
    name: AgentName,
    size: Size,
    billingType: BillingType,
    /** Where the clone goes; default: the source's account. */
    accountId: Id.optional(),
  }),
  response: { status: 201, body: Agent },
  errors: [
    'invalid_state',
    'legacy_cohort',
    'size_downgrade',
    'subscription_required',
    'email_unverified',
  ],
});

export const transferAgent = defineEndpoint({
  id: 'transferAgent',
  method: 'POST',
  path: '/api/agents/{id}/transfer',
  auth: 'session',
  tag: 'agents',
  summary:
    'Move a running or stopped Agent to an organization with active billing that the caller belongs to; it arrives metered. Only an owner or admin of the source account may.',
  params: AgentParams,
  body: z.object({ targetAccountId: Id }),
  response: { status: 200, body: Agent },
  errors: ['invalid_state', 'target_not_organization', 'target_billing_inactive'],
});

/** A machine's settings PATCH: every field optional, at least one given, nothing else. */
export const MachineSettings = <S extends z.ZodRawShape>(shape: S) =>
  z
    .strictObject({ ...shape, backups: BackupsSettings.optional() })
    .refine((body) => Object.values(body).some((value) => value !== undefined), {
      message: 'give at least one setting to change',
    });

export const updateAgent = defineEndpoint({
  id: 'updateAgent',
  method: 'PATCH',
  path: '/api/agents/{id}',
  auth: 'session',
  tag: 'agents',
  summary:
    "Change an Agent's settings, in any state: `idleStopMinutes`, `backups` (daily backups on or off and how many to keep; a lower `keep` prunes at the next backup run). At least one.",
  params: AgentParams,
  body: MachineSettings({ idleStopMinutes: IdleStopMinutes.optional() }),
  response: { status: 200, body: Agent },
  errors: [],
});

export const setAgentBilling = defineEndpoint({
  id: 'setAgentBilling',
  method: 'PATCH',
  path: '/api/agents/{id}/billing',
  auth: 'session',
  tag: 'agents',
  summary: 'Switch between metered and subscription billing (running or stopped Agents).',
  params: AgentParams,
  body: z.object({ billingType: BillingType }),
  response: {
    status: 200,
    body: z.object({
      success: z.literal(true),
      billingType: BillingType,
      addedNewSlot: z.boolean(),
    }),
  },
  errors: ['invalid_state', 'legacy_cohort', 'subscription_required'],
});

export const resizeAgent = defineEndpoint({
  id: 'resizeAgent',
  method: 'POST',
  path: '/api/agents/{id}/resize',
  auth: 'session',
  tag: 'agents',
  summary:
    "Change a stopped Agent's size in place: CPU and memory up or down, the disk only up (`disk_shrink`). A subscription Agent takes a free slot of the new size; its old slot stays. Metered: the new rate from this second.",
  params: AgentParams,
  body: z.strictObject({ size: Size }),
  response: { status: 200, body: Agent },
  errors: ['invalid_state', 'disk_shrink', 'subscription_required'],
});

export const getSelfAgent = defineEndpoint({
  id: 'getSelfAgent',
  method: 'GET',
  path: '/api/agent/self',
  auth: 'agent',
  tag: 'agents',
  summary: 'The Agent whose token is presented (how `svc` learns where it runs).',
  response: { status: 200, body: Agent },
  errors: [],
});

export const reportAgentActivity = defineEndpoint({
  id: 'reportAgentActivity',
  method: 'POST',
  path: '/api/agent/activity',
  auth: 'agent',
  tag: 'agents',
  summary:
    "The Agent's gateway reports the SSH sessions open on its machine: one or more count as a person's activity for the idle stop. The answer says how often to report.",
  body: z.object({ sshSessions: z.number().int().min(0).max(100_000) }).strict(),
  response: {
    status: 200,
    body: z.object({ reportEveryMs: z.number().int().positive() }),
  },
  errors: [],
});

export const openAgentGateway = defineEndpoint({
  id: 'openAgentGateway',
  method: 'POST',
  path: '/api/agents/{id}/gateway-ticket',
  auth: 'session',
  tag: 'agents',
  summary:
    "A one-time link into a running Agent's editor and terminal: its gateway URL with a ticket that expires in a minute.",
  params: AgentParams,
  response: {
    status: 201,
    body: z.object({ url: z.string(), expiresAt: Timestamp }),
  },
  errors: ['invalid_state'],
});

export const agentEndpoints = [
  getSelfAgent,
  reportAgentActivity,
  createAgent,
  listAgents,
  getAgent,
  updateAgent,
  startAgent,
  stopAgent,
  restartAgent,
  deleteAgent,
  cloneAgent,
  transferAgent,
  setAgentBilling,
  resizeAgent,
  openAgentGateway,
] as const;
