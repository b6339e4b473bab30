import { z } from 'zod';
import { BillingType, MachineLimits, MachineSettings, Region, Size, SizeSpecs } from './agents.js';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';
import { FirewallRule, FirewallRules } from './firewall.js';
import { MachineState } from './lifecycle.js';
import { Backups, DiskOperation } from './snapshots.js';
import { STATUS_REASON_DESCRIPTION } from './status-reasons.js';

/** The OS images a Plain VM can run, with the user each logs in as. */
export const OS_IMAGES = [
  { key: 'ubuntu-24.04', displayName: 'Ubuntu 24.04 LTS', defaultUser: 'ubuntu' },
  { key: 'ubuntu-22.04', displayName: 'Ubuntu 22.04 LTS', defaultUser: 'ubuntu' },
  { key: 'debian-13', displayName: 'Debian 13', defaultUser: 'debian' },
  { key: 'debian-12', displayName: 'Debian 12', defaultUser: 'debian' },
  { key: 'fedora-43', displayName: 'Fedora 43', defaultUser: 'root' },
  { key: 'rocky-10', displayName: 'Rocky Linux 10', defaultUser: 'root' },
  { key: 'alma-10', displayName: 'AlmaLinux 10', defaultUser: 'root' },
] as const;

export type OsImageKey = (typeof OS_IMAGES)[number]['key'];
export const OsImageKey = z.enum(OS_IMAGES.map((image) => image.key) as [OsImageKey]);

export const defaultUserOf = (key: OsImageKey): string =>
  (OS_IMAGES.find((image) => image.key === key) as (typeof OS_IMAGES)[number]).defaultUser;

/** The name is the VM's hostname: one DNS label. */
export const PlainVmName = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'Use 1 to 63 lower-case letters, digits and hyphens, not starting or ending with a hyphen',
  );

export const PlainVmAccess = z.object({
  passwordEnabled: z.boolean(),
  /** Vault entries of the VM's account whose keys the default user accepts. */
  vaultEntryIds: z.array(Id).max(50, 'Choose at most 50 keys'),
});

export const PlainVm = z.object({
  id: Id,
  accountId: Id,
  name: z.string(),
  tier: Size,
  region: Region,
  osImageKey: OsImageKey,
  billingType: BillingType,
  status: MachineState,
  statusReason: z.string().nullable().meta({ description: STATUS_REASON_DESCRIPTION }),
  diskOperation: DiskOperation,
  backups: Backups,
  provider: z.string(),
  access: PlainVmAccess,
  defaultUser: z.string(),
  ipv4: z.string().nullable(),
  ipv6: z.string().nullable(),
  /** Where to point an SSH client; `null` until the VM has a server. */
  ssh: z.object({ host: z.string(), port: z.number().int() }).nullable(),
  specs: SizeSpecs,
  limits: MachineLimits.optional(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type PlainVm = z.infer<typeof PlainVm>;

const Params = z.object({ id: Id });
const tag = 'plain-vms';

export const createPlainVm = defineEndpoint({
  id: 'createPlainVm',
  method: 'POST',
  path: '/api/plain-vms',
  auth: 'session',
  tag,
  summary:
    'Create a Plain VM; it is provisioned in the background. `initialPassword` is in this answer only.',
  body: z.object({
    name: PlainVmName,
    tier: Size,
    region: Region,
    osImageKey: OsImageKey,
    billingType: BillingType,
    access: PlainVmAccess,
    accountId: Id.optional(),
  }),
  response: {
    status: 201,
    body: PlainVm.extend({ initialPassword: z.string().optional() }),
  },
  errors: ['subscription_required', 'email_unverified'],
});

export const listOsImages = defineEndpoint({
  id: 'listOsImages',
  method: 'GET',
  path: '/api/plain-vms/images',
  auth: 'session',
  tag,
  summary:
    'The OS images a Plain VM can run, with their default users, and whether this service has each now.',
  response: {
    status: 200,
    body: z.array(
      z.object({
        key: OsImageKey,
        displayName: z.string(),
        defaultUser: z.string(),
        available: z.boolean().meta({
          description:
            'Whether the compute driver has this image now: a VM of an image it lacks ends in `error` with `image_unavailable`',
        }),
      }),
    ),
  },
  errors: [],
});

export const listPlainVms = defineEndpoint({
  id: 'listPlainVms',
  method: 'GET',
  path: '/api/plain-vms',
  auth: 'session',
  tag,
  summary: 'The Plain VMs of one account (`accountId`), or of every account the caller belongs to.',
  query: z.object({ accountId: Id.optional() }),
  response: { status: 200, body: z.array(PlainVm) },
  errors: [],
});

export const getPlainVm = defineEndpoint({
  id: 'getPlainVm',
  method: 'GET',
  path: '/api/plain-vms/{id}',
  auth: 'session',
  tag,
  summary: 'The Plain VM detail, with where to SSH to.',
  params: Params,
  response: { status: 200, body: PlainVm },
  errors: [],
});

// Each caller writes its path out whole, so a search for the URL finds its endpoint.
const lifecycle = (id: string, path: string, summary: string) =>
  defineEndpoint({
    id,
    method: 'POST',
    path,
    auth: 'session',
    tag,
    summary,
    params: Params,
    response: { status: 200, body: PlainVm },
    errors: ['invalid_state'],
  });

export const startPlainVm = lifecycle(
  'startPlainVm',
  '/api/plain-vms/{id}/start',
  'Start a stopped Plain VM.',
);
export const stopPlainVm = lifecycle(
  'stopPlainVm',
  '/api/plain-vms/{id}/stop',
  'Stop a running Plain VM.',
);
export const restartPlainVm = lifecycle(
  'restartPlainVm',
  '/api/plain-vms/{id}/restart',
  'Power-cycle a running Plain VM.',
);

export const deletePlainVm = defineEndpoint({
  id: 'deletePlainVm',
  method: 'DELETE',
  path: '/api/plain-vms/{id}',
  auth: 'session',
  tag,
  summary: 'Destroy a Plain VM (running, stopped or error): billing closes, teardown runs behind.',
  params: Params,
  response: { status: 200, body: PlainVm },
  errors: ['invalid_state'],
});

export const updatePlainVm = defineEndpoint({
  id: 'updatePlainVm',
  method: 'PATCH',
  path: '/api/plain-vms/{id}',
  auth: 'session',
  tag,
  summary:
    "Change a Plain VM's settings, in any state: `backups` (daily backups on or off and how many to keep; a lower `keep` prunes at the next backup run).",
  params: Params,
  body: MachineSettings({}),
  response: { status: 200, body: PlainVm },
  errors: [],
});

export const resizePlainVm = defineEndpoint({
  id: 'resizePlainVm',
  method: 'POST',
  path: '/api/plain-vms/{id}/resize',
  auth: 'session',
  tag,
  summary:
    "Change a stopped VM's tier in place: CPU and memory up or down, the disk only up (`disk_shrink`). A subscription VM takes a free slot of the new tier; its old slot stays. Metered: the new rate from this second.",
  params: Params,
  body: z.strictObject({ tier: Size }),
  response: { status: 200, body: PlainVm },
  errors: ['invalid_state', 'disk_shrink', 'subscription_required'],
});

export const setPlainVmBilling = defineEndpoint({
  id: 'setPlainVmBilling',
  method: 'PATCH',
  path: '/api/plain-vms/{id}/billing',
  auth: 'session',
  tag,
  summary: 'Switch between metered and subscription billing (running or stopped VMs).',
  params: Params,
  body: z.object({ billingType: BillingType }),
  response: {
    status: 200,
    body: z.object({
      success: z.literal(true),
      billingType: BillingType,
      addedNewSlot: z.boolean(),
    }),
  },
  errors: ['invalid_state', 'subscription_required'],
});

export const transferPlainVm = defineEndpoint({
  id: 'transferPlainVm',
  method: 'POST',
  path: '/api/plain-vms/{id}/transfer',
  auth: 'session',
  tag,
  summary:
    'Move a running or stopped Plain VM to an organization with active billing; it keeps running and arrives metered. Only an owner or admin of the source account may.',
  params: Params,
  body: z.object({ targetAccountId: Id }),
  response: { status: 200, body: PlainVm.extend({ transferNote: z.string() }) },
  errors: ['not_transferable', 'target_not_organization', 'target_billing_inactive'],
});

export const getPlainVmFirewall = defineEndpoint({
  id: 'getPlainVmFirewall',
  method: 'GET',
  path: '/api/plain-vms/{id}/firewall',
  auth: 'session',
  tag,
  summary: "The VM's firewall rules, as the infrastructure provider has them.",
  params: Params,
  response: { status: 200, body: z.object({ rules: z.array(FirewallRule) }) },
  errors: [],
});

export const putPlainVmFirewall = defineEndpoint({
  id: 'putPlainVmFirewall',
  method: 'PUT',
  path: '/api/plain-vms/{id}/firewall',
  auth: 'session',
  tag,
  summary:
    'Replace the whole rule set (at most 50 inbound rules); answers with the rules as re-read from the provider.',
  params: Params,
  body: FirewallRules,
  response: { status: 200, body: z.object({ rules: z.array(FirewallRule) }) },
  errors: ['invalid_state'],
});

export const plainVmEndpoints = [
  createPlainVm,
  listOsImages,
  listPlainVms,
  getPlainVm,
  startPlainVm,
  stopPlainVm,
  restartPlainVm,
  deletePlainVm,
  setPlainVmBilling,
  resizePlainVm,
  updatePlainVm,
  transferPlainVm,
  getPlainVmFirewall,
  putPlainVmFirewall,
] as const;
