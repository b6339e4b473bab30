import {
  type Access,
  activateSubscription,
  addMember,
  allEndpoints,
  buildPath,
  changeMemberRole,
  cloneAgent,
  createInvitation,
  DEFAULT_FIREWALL_RULES,
  ENDPOINT_ACCESS,
  type Endpoint,
  ErrorEnvelope,
  listMembers,
  parseRequestPart,
  removeMember,
  roleAtLeast,
  shareAgentPort,
  transferAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTestInvoice } from '../../test/billing-fixture.js';
import {
  CALLER_KINDS,
  type Caller,
  type CallerKind,
  createRolesFixture,
  PASSWORD,
  publicKeyLine,
  type RolesFixture,
  uniqueName,
} from '../../test/roles-fixture.js';
import type { RawResponse, TestClient } from '../../test/test-client.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

// The rights table (`ENDPOINT_ACCESS`, docs/roles.md) against the service: every endpoint a user
// may call runs as the owner, an admin and a member of an organization with an active
// subscription, and as a signed-in user outside it. Allowed callers must get past authorization
// (any answer but 401, 403 and 404: an example may still meet the fixture's state, e.g. 409), a
// member below the role 403 `forbidden`, a non-member 404 `not_found`.

/** One request: its parts as strings and JSON, and what to put back after it. */
interface Call {
  readonly params?: Record<string, string>;
  readonly query?: Record<string, string>;
  readonly body?: unknown;
  readonly after?: () => Promise<unknown>;
}

/** A small valid request for the endpoint, as `caller`; fresh resources where the call uses one up. */
type Example = (fx: RolesFixture, caller: Caller) => Call | Promise<Call>;

const inOrg = (fx: RolesFixture) => ({ params: { id: fx.org.id } });
const ofAgent = (fx: RolesFixture) => ({ params: { id: fx.agentId } });
const ofPlainVm = (fx: RolesFixture) => ({ params: { id: fx.plainVmId } });
const ofOrg = (fx: RolesFixture) => ({ query: { accountId: fx.org.id } });

/**
 * A ready snapshot of the fixture's running machine, taken by the owner (once the machine's
 * earlier snapshot, if any, is done: one at a time), for the calls that name one.
 */
async function readySnapshot(fx: RolesFixture, kind: 'agents' | 'plain-vms') {
  const id = kind === 'agents' ? fx.agentId : fx.plainVmId;
  const { client } = fx.callers.owner;
  const base = `/api/${kind}/${id}/snapshots`;
  type Listed = { snapshots: { id: string; status: string }[] };
  // The ones earlier calls left, removed: the machine stays below its limit.
  for (const old of ((await client.request('GET', base)).body as Listed).snapshots) {
    if (old.status !== 'creating') await client.request('DELETE', `${base}/${old.id}`);
  }
  const made = await waitFor(async () => {
    const res = await client.request('POST', base, { body: { name: uniqueName('snap') } });
    return res.status === 202 && (res.body as { id: string });
  }, 30_000);
  await waitFor(async () => {
    const { snapshots } = (await client.request('GET', base)).body as Listed;
    return snapshots.find((s) => s.id === made.id)?.status === 'ready';
  }, 30_000);
  return { params: { id, snapshotId: made.id } };
}
const none = () => ({});
/** The fixture's Agent's `port`, shared with its account by the owner. */
const sharedPort = async (fx: RolesFixture, port: number) => {
  const params = { id: fx.agentId, port };
  await fx.callers.owner.client.call(shareAgentPort, { params, body: { share: 'account' } });
  return { id: fx.agentId, port: String(port) };
};
const invoices = new WeakMap<RolesFixture, Promise<number>>();
/** The organization's invoice (one per fixture), by its number. */
const invoiceOf = async (fx: RolesFixture) => {
  const number =
    invoices.get(fx) ?? insertTestInvoice(fx.t.ctx.database, fx.org.id, fx.t.clock.now());
  invoices.set(fx, number);
  return String(await number);
};

const EXAMPLES: Readonly<Record<string, Example>> = {
  getMe: none,
  updateMe: (_, c) => ({ body: { name: `Renamed ${c.kind}` } }),
  // Runs last (see `ordered`): whoever it deletes is gone for every later call.
  deleteMe: none,
  changePassword: () => ({ body: { currentPassword: PASSWORD, newPassword: PASSWORD } }),
  listSessions: none,
  endSession: async (fx, c) => ({ params: { id: await fx.newSession(c) } }),
  getNoticePreferences: none,
  updateNoticePreferences: () => ({ body: { agent_idle_stopped: true } }),
  resendVerification: none,
  createApiToken: () => ({ body: { name: 'script', scope: 'read' } }),
  listApiTokens: none,
  revokeApiToken: async (fx, c) => ({ params: { id: (await fx.newApiToken(c)).id } }),

  createOrg: () => ({ body: { name: 'Another org', slug: uniqueName('org') } }),
  listMembers: inOrg,
  addMember: async (fx) => ({
    ...inOrg(fx),
    body: { email: (await fx.newUser()).email, role: 'member' },
  }),
  changeMemberRole: async (fx) => ({
    params: { id: fx.org.id, userId: (await fx.newMember()).id },
    body: { role: 'admin' },
  }),
  removeMember: async (fx) => ({ params: { id: fx.org.id, userId: (await fx.newMember()).id } }),
  createInvitation: (fx) => ({
    ...inOrg(fx),
    body: { email: `${uniqueName('invitee')}@example.com`, role: 'member' },
  }),
  listInvitations: inOrg,
  revokeInvitation: async (fx) => ({
    params: { id: fx.org.id, invitationId: await fx.newInvitation() },
  }),
  // Only a verified address accepts (the caller's is verified first).
  acceptInvitation: async (fx, caller) => ({
    body: { token: await fx.newInvitationToken(caller) },
  }),
  listAuditEvents: (fx) => ({ ...inOrg(fx), query: { kind: 'member' } }),

  activateSubscription: inOrg,
  deactivateSubscription: (fx) => ({
    ...inOrg(fx),
    // Puts the subscription back; either answer will do, as a refused caller left it active.
    after: () => fx.callers.owner.client.send(activateSubscription, inOrg(fx)),
  }),
  listSlots: inOrg,
  // The slot is in use: managers get 409 after the role check, and the slot stays.
  deleteSlot: (fx) => ({ params: { id: fx.org.id, slotId: fx.slotId } }),
  getUsage: inOrg,
  getUpcomingInvoice: inOrg,
  listInvoices: inOrg,
  getInvoice: async (fx) => ({ params: { id: fx.org.id, number: await invoiceOf(fx) } }),
  getInvoicePage: async (fx) => ({ params: { id: fx.org.id, number: await invoiceOf(fx) } }),

  createAgent: (fx, c) => ({
    body: {
      name: `by-${c.kind}`,
      size: 'small',
      region: 'eu',
      billingType: 'metered',
      accountId: fx.org.id,
    },
  }),
  listAgents: ofOrg,
  getAgent: ofAgent,
  updateAgent: (fx) => ({ ...ofAgent(fx), body: { idleStopMinutes: 0 } }),
  startAgent: ofAgent,
  stopAgent: async (fx) => ({ params: { id: await fx.runningAgent() } }),
  restartAgent: (fx) => ({ ...ofAgent(fx), after: () => fx.running('agents', fx.agentId) }),
  deleteAgent: async (fx) => ({ params: { id: await fx.runningAgent() } }),
  cloneAgent: (fx, c) => ({
    ...ofAgent(fx),
    body: { name: `clone-${c.kind}`, size: 'small', billingType: 'metered' },
  }),
  // Into its own account: refused (400) after the role check, so the Agent stays where it is.
  transferAgent: (fx) => ({ ...ofAgent(fx), body: { targetAccountId: fx.org.id } }),
  setAgentBilling: (fx) => ({ ...ofAgent(fx), body: { billingType: 'metered' } }),
  // Its own size: allowed and a no-op, so each caller finds it as it was.
  resizeAgent: (fx) => ({ ...ofAgent(fx), body: { size: 'small' } }),
  listAgentSnapshots: ofAgent,
  // A snapshot of the running Agent (a 409 once its limit is reached still passed the roles).
  createAgentSnapshot: (fx, c) => ({ ...ofAgent(fx), body: { name: uniqueName(`${c.kind}`) } }),
  deleteAgentSnapshot: (fx) => readySnapshot(fx, 'agents'),
  // Of the running Agent: 409 (stop it first) after the role check.
  restoreAgentSnapshot: (fx) => readySnapshot(fx, 'agents'),
  openAgentGateway: ofAgent,
  listAgentPorts: ofAgent,
  shareAgentPort: (fx) => ({
    params: { id: fx.agentId, port: '3001' },
    body: { share: 'account' },
  }),
  // Shared by the owner first: each caller's call finds the port shared.
  unshareAgentPort: async (fx) => ({ params: await sharedPort(fx, 3002) }),
  openAgentPort: async (fx) => ({ params: await sharedPort(fx, 3003), body: {} }),

  createPlainVm: (fx, c) => ({
    body: {
      name: `vm-${c.kind}`,
      tier: 'small',
      region: 'eu',
      osImageKey: 'debian-12',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] },
      accountId: fx.org.id,
    },
  }),
  listOsImages: none,
  listPlainVms: ofOrg,
  getPlainVm: ofPlainVm,
  startPlainVm: ofPlainVm,
  stopPlainVm: async (fx) => ({ params: { id: await fx.runningPlainVm() } }),
  restartPlainVm: (fx) => ({
    ...ofPlainVm(fx),
    after: () => fx.running('plain-vms', fx.plainVmId),
  }),
  deletePlainVm: async (fx) => ({ params: { id: await fx.runningPlainVm() } }),
  setPlainVmBilling: (fx) => ({ ...ofPlainVm(fx), body: { billingType: 'metered' } }),
  resizePlainVm: (fx) => ({ ...ofPlainVm(fx), body: { tier: 'small' } }),
  updatePlainVm: (fx) => ({ ...ofPlainVm(fx), body: { backups: { enabled: false, keep: 7 } } }),
  transferPlainVm: (fx) => ({ ...ofPlainVm(fx), body: { targetAccountId: fx.org.id } }),
  listPlainVmSnapshots: ofPlainVm,
  createPlainVmSnapshot: (fx, c) => ({
    ...ofPlainVm(fx),
    body: { name: uniqueName(`${c.kind}`) },
  }),
  deletePlainVmSnapshot: (fx) => readySnapshot(fx, 'plain-vms'),
  restorePlainVmSnapshot: (fx) => readySnapshot(fx, 'plain-vms'),
  getPlainVmFirewall: ofPlainVm,
  putPlainVmFirewall: (fx) => ({ ...ofPlainVm(fx), body: { rules: DEFAULT_FIREWALL_RULES } }),

  addVaultEntry: (fx, c) => ({
    body: {
      type: 'ssh_key',
      label: c.kind,
      value: publicKeyLine(`${c.kind}@test`),
      accountId: fx.org.id,
    },
  }),
  listVaultEntries: ofOrg,
  deleteVaultEntry: async (fx) => ({ params: { id: await fx.newVaultKey() } }),

  listAppProviders: none,
  authorizeApp: (fx) => ({ query: { provider: 'suite', accountId: fx.org.id } }),
  listAppConnections: ofOrg,
  getConnectionToken: (fx) => ({ params: { id: fx.connectionId } }),
  deleteAppConnection: async (fx) => ({ params: { id: await fx.newConnection() } }),

  listAccountBundles: inOrg,
  deleteBundle: async (fx) => ({
    params: { accountSlug: fx.org.slug, name: (await fx.newBundle()).name },
  }),
  deleteBundleVersion: async (fx) => {
    const { name, version } = await fx.newBundle();
    return { params: { accountSlug: fx.org.slug, name, version } };
  },
};

/** The endpoints a signed-in user calls (the others: `none` and `agent`). */
const USER_AUTH = new Set<Endpoint['auth']>(['session', 'session-only', 'session-or-agent']);
const userEndpoints = allEndpoints.filter((e) => USER_AUTH.has(e.auth));
/** Calls that must come after every other (they would take the caller away). */
const LAST = new Set(['deleteMe']);
const ordered = [
  ...userEndpoints.filter((e) => !LAST.has(e.id)),
  ...userEndpoints.filter((e) => LAST.has(e.id)),
];

type Outcome = 'allowed' | 'forbidden' | 'not_found';

/** What the table says `caller` gets. */
function outcomeOf(access: Access, caller: CallerKind): Outcome {
  if (access === 'self' || access === 'user') return 'allowed';
  if (access === 'public' || access === 'agent') throw new Error(`${access} is not a user's call`);
  if (caller === 'outsider') return 'not_found';
  return roleAtLeast(caller, access) ? 'allowed' : 'forbidden';
}

/** The code of an answer in the error envelope; `undefined` for any other answer. */
function errorCode(res: RawResponse) {
  const envelope = ErrorEnvelope.safeParse(res.body);
  return envelope.success ? envelope.data.error : undefined;
}

/** Why the answer is not `want`, or `undefined` when it is. */
function mismatch(want: Outcome, res: RawResponse): string | undefined {
  const got = `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
  if (want === 'allowed') {
    return [401, 403, 404].includes(res.status) || res.status >= 500
      ? `allowed, got ${got}`
      : undefined;
  }
  const status = want === 'forbidden' ? 403 : 404;
  return res.status === status && errorCode(res) === want ? undefined : `${want}, got ${got}`;
}

/** A path with a made-up id in every parameter, for calls refused before the route runs. */
const anyPath = (endpoint: Endpoint) =>
  endpoint.path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');

function send(
  client: TestClient,
  endpoint: Endpoint,
  call: Call,
  headers?: Record<string, string>,
) {
  const search = new URLSearchParams(call.query).toString();
  const path = buildPath(endpoint.path, call.params);
  return client.request(endpoint.method, search ? `${path}?${search}` : path, {
    ...(call.body !== undefined && { body: call.body }),
    ...(headers && { headers }),
  });
}

/** An example that fails its endpoint's schemas would test the validation, not the roles. */
function expectValid(endpoint: Endpoint, call: Call) {
  const parts = [
    [endpoint.params, call.params ?? {}, 'params'],
    [endpoint.query, call.query ?? {}, 'query'],
    [endpoint.body, call.body, 'body'],
  ] as const;
  for (const [schema, value, part] of parts) {
    if (!schema) continue;
    const parsed = parseRequestPart(schema, value, part);
    expect(parsed.success, `${endpoint.id} ${part}: ${JSON.stringify(parsed)}`).toBe(true);
  }
}

describe('the rights table', () => {
  it('has one entry per endpoint, and none for an endpoint that does not exist', () => {
    const ids = allEndpoints.map((e) => e.id);
    expect(ids.filter((id) => !Object.hasOwn(ENDPOINT_ACCESS, id))).toEqual([]);
    expect(Object.keys(ENDPOINT_ACCESS).filter((id) => !ids.includes(id))).toEqual([]);
  });

  it("agrees with each endpoint's credential", () => {
    const wrong = allEndpoints.filter((e) => {
      const { access } = ENDPOINT_ACCESS[e.id] ?? {};
      if (e.auth === 'none') return access !== 'public';
      if (e.auth === 'agent') return access !== 'agent';
      return access === 'public' || access === 'agent';
    });
    expect(wrong.map((e) => `${e.id} (${e.auth})`)).toEqual([]);
  });

  it('has an example request for every endpoint a signed-in user calls', () => {
    expect(userEndpoints.filter((e) => !EXAMPLES[e.id]).map((e) => e.id)).toEqual([]);
  });
});

// PGlite always; PostgreSQL too with TEST_DATABASE_URL (each takes seconds to tens of seconds).
// Each run makes a few hundred requests and waits for machines on a shared, sometimes slow
// machine: hence the generous timeouts.
describe.each(databaseKinds)('who may call each endpoint, on %s', { timeout: 180_000 }, (kind) => {
  let fx: RolesFixture;
  beforeAll(async () => {
    fx = await createRolesFixture(kind);
  }, 180_000);
  afterAll(() => fx?.close());

  it('answers 404 on a personal account where the table says organizations only', async () => {
    const owner = fx.callers.owner;
    const orgOnly = userEndpoints.filter((e) => ENDPOINT_ACCESS[e.id]?.organizationOnly);
    expect(orgOnly.length).toBeGreaterThan(0);
    for (const endpoint of orgOnly) {
      const call = await (EXAMPLES[endpoint.id] as Example)(fx, owner);
      const res = await send(owner.client, endpoint, {
        ...call,
        params: { ...call.params, id: owner.personalId },
      });
      expect(mismatch('not_found', res), endpoint.id).toBeUndefined();
    }
  });

  it('holds the finer rules of the notes', async () => {
    const { owner, admin, member } = fx.callers;
    const org = fx.org.id;
    const ofMember = (userId: string) => ({ params: { id: org, userId } });

    // Only owners add, invite or make an owner; an admin cannot demote or remove one.
    const addingOwner = async () => ({
      params: { id: org },
      body: { email: (await fx.newUser()).email, role: 'owner' as const },
    });
    expect((await admin.client.callError(addMember, await addingOwner())).status).toBe(403);
    expect((await owner.client.call(addMember, await addingOwner())).status).toBe(202);
    const coOwner = { userId: (await fx.newMember('owner')).id };
    const invitingOwner = () => ({
      params: { id: org },
      body: { email: `${uniqueName('owner')}@example.com`, role: 'owner' as const },
    });
    expect((await admin.client.callError(createInvitation, invitingOwner())).status).toBe(403);
    expect((await owner.client.call(createInvitation, invitingOwner())).status).toBe(201);
    const promoted = await fx.newMember();
    expect(
      (
        await admin.client.callError(changeMemberRole, {
          ...ofMember(promoted.id),
          body: { role: 'owner' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await admin.client.callError(changeMemberRole, {
          ...ofMember(coOwner.userId),
          body: { role: 'admin' },
        })
      ).status,
    ).toBe(403);
    expect((await admin.client.callError(removeMember, ofMember(coOwner.userId))).status).toBe(403);
    expect((await owner.client.call(removeMember, ofMember(coOwner.userId))).status).toBe(204);
    // The last owner stays.
    expect((await owner.client.callError(removeMember, ofMember(owner.id))).body.error).toBe(
      'last_owner',
    );

    // Every member may leave.
    const leaving = await fx.newMember();
    expect((await leaving.client.call(removeMember, ofMember(leaving.id))).status).toBe(204);
    expect((await leaving.client.callError(listMembers, { params: { id: org } })).status).toBe(404);

    // A clone leaves the account only by a manager of the source's.
    const clone = (as: Caller) => ({
      params: { id: fx.agentId },
      body: {
        name: 'elsewhere',
        size: 'small',
        billingType: 'metered',
        accountId: as.personalId,
      } as const,
    });
    expect((await member.client.callError(cloneAgent, clone(member))).body.error).toBe('forbidden');
    expect((await admin.client.send(cloneAgent, clone(admin))).status).not.toBe(403);

    // A transfer needs membership of the target too: 403 there, not 404.
    const elsewhere = await fx.newOrg('elsewhere');
    const transfer = await admin.client.callError(transferAgent, {
      params: { id: fx.agentId },
      body: { targetAccountId: elsewhere.id },
    });
    expect(transfer.body.error).toBe('forbidden');
  });

  it('lets a token act as its user: a read token on GETs that hand out no credential, none on session-only endpoints', async () => {
    const owner = fx.callers.owner;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const read = bearer((await fx.newApiToken(owner, 'read')).token);
    const write = bearer((await fx.newApiToken(owner, 'write')).token);
    const failures: string[] = [];
    const expectError = (endpoint: Endpoint, res: RawResponse, error: string) => {
      if (errorCode(res) !== error) {
        failures.push(`${endpoint.id}: ${error}, got ${res.status} ${JSON.stringify(res.body)}`);
      }
    };
    for (const endpoint of userEndpoints) {
      // A client without cookies: the token alone speaks.
      const client = fx.t.newClient();
      if (endpoint.auth === 'session-only') {
        const res = await client.request(endpoint.method, anyPath(endpoint), { headers: write });
        expectError(endpoint, res, 'unauthorized');
      } else if (endpoint.method !== 'GET' || endpoint.tokenScope === 'write') {
        const res = await client.request(endpoint.method, anyPath(endpoint), { headers: read });
        expectError(endpoint, res, 'insufficient_scope');
      } else {
        const call = await (EXAMPLES[endpoint.id] as Example)(fx, owner);
        const problem = mismatch('allowed', await send(client, endpoint, call, read));
        if (problem) failures.push(`${endpoint.id}: ${problem}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses a session on the endpoints of Agents', async () => {
    const owner = fx.callers.owner;
    for (const endpoint of allEndpoints.filter((e) => e.auth === 'agent')) {
      const res = await owner.client.request(endpoint.method, anyPath(endpoint));
      expect(res.status, endpoint.id).toBe(401);
    }
  });

  // Last: `deleteMe` may take callers away.
  it('answers each role and a non-member as the table says', async () => {
    const failures: string[] = [];
    for (const endpoint of ordered) {
      const example = EXAMPLES[endpoint.id] as Example;
      const { access } = ENDPOINT_ACCESS[endpoint.id] as { access: Access };
      for (const kind of CALLER_KINDS) {
        const caller = fx.callers[kind];
        const call = await example(fx, caller);
        expectValid(endpoint, call);
        const res = await send(caller.client, endpoint, call);
        await call.after?.();
        const problem = mismatch(outcomeOf(access, kind), res);
        if (problem) failures.push(`${endpoint.method} ${endpoint.path} as ${kind}: ${problem}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
