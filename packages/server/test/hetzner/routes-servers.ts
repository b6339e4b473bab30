import { randomBytes } from 'node:crypto';
import { LOCATIONS, SERVER_TYPES } from './catalog.js';
import {
  HetznerError,
  invalidInput,
  locked,
  notFound,
  resourceLimitExceeded,
  uniquenessError,
} from './errors.js';
import { parseLabelSelector, validateLabels } from './label-selector.js';
import { paginate } from './pagination.js';
import { serverJson } from './render.js';
import { bodyObject, idParam, type Route, type RouteContext } from './router.js';
import { isoTime, type ServerRecord } from './state.js';

// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens.
const HOSTNAME =
  /^(?=.{1,253}$)[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/;
const USER_DATA_MAX_BYTES = 32 * 1024;

function requiredString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '') throw invalidInput(field, 'is required');
  return value;
}

/** By name, or by id written as a string (Hetzner accepts both for these fields). */
export function byNameOrId<T extends { id: number; name: string | null }>(
  items: Iterable<T>,
  key: string,
): T | undefined {
  for (const item of items) if (item.name === key || String(item.id) === key) return item;
  return undefined;
}

export function findServer(context: RouteContext): ServerRecord {
  const server = context.store.servers.get(idParam(context, 'server'));
  if (!server) throw notFound('server');
  return server;
}

export function assertUnlocked(server: ServerRecord): void {
  if (server.lockedBy !== null) throw locked();
}

function listServers(context: RouteContext) {
  const { query } = context;
  const selector = query.get('label_selector');
  const matches = selector ? parseLabelSelector(selector) : () => true;
  const name = query.get('name');
  const statuses = query.getAll('status');
  const servers = [...context.store.servers.values()].filter(
    (server) =>
      matches(server.labels) &&
      (name === null || server.name === name) &&
      (statuses.length === 0 || statuses.includes(server.status)),
  );
  const page = paginate(servers, query);
  const json = page.items.map((server) => serverJson(server, context.store, context.faults));
  return { status: 200, body: { servers: json, meta: { pagination: page.meta } } };
}

function firewallIds(context: RouteContext, value: unknown): number[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidInput('firewalls', 'must be a list');
  return value.map((entry: { firewall?: unknown }) => {
    const id = entry?.firewall;
    if (typeof id !== 'number' || !context.store.firewalls.has(id))
      throw invalidInput('firewalls', `firewall ${String(id)} not found`);
    return id;
  });
}

function createServer(context: RouteContext) {
  const { store } = context;
  const body = bodyObject(context);
  const name = requiredString(body, 'name');
  if (!HOSTNAME.test(name)) throw invalidInput('name', 'must be a valid hostname (RFC 1123)');
  const serverType = byNameOrId(SERVER_TYPES, requiredString(body, 'server_type'));
  if (!serverType) throw invalidInput('server_type', 'server type not found');
  const image = byNameOrId(store.images.values(), requiredString(body, 'image'));
  if (image?.status !== 'available') throw invalidInput('image', 'image not found');
  const userData = body.user_data;
  if (userData !== undefined && typeof userData !== 'string')
    throw invalidInput('user_data', 'must be a string');
  if (userData !== undefined && Buffer.byteLength(userData) > USER_DATA_MAX_BYTES)
    throw invalidInput('user_data', 'is too long (at most 32 KiB)');
  const labels = validateLabels(body.labels);
  const firewalls = firewallIds(context, body.firewalls);
  // `datacenter` (deprecated) names a location too: `fsn1-dc14` is in fsn1.
  const locationKey =
    body.location ??
    (typeof body.datacenter === 'string' ? body.datacenter.split('-')[0] : undefined);
  const location =
    locationKey === undefined
      ? LOCATIONS.find((loc) => serverType.locations.includes(loc.name))
      : byNameOrId(LOCATIONS, String(locationKey));
  if (!location) throw invalidInput('location', 'location not found');
  if ([...store.servers.values()].some((server) => server.name === name))
    throw uniquenessError('name');
  if (context.limits.servers !== undefined && store.servers.size >= context.limits.servers)
    throw resourceLimitExceeded('server_limit');
  if (
    !serverType.locations.includes(location.name) ||
    serverType.deprecatedIn?.includes(location.name) ||
    context.faults.isUnavailable(serverType.name, location.name)
  )
    throw new HetznerError(
      412,
      'resource_unavailable',
      `server type ${serverType.name} is unavailable in ${location.name}`,
    );
  if (serverType.disk < image.diskSize)
    throw invalidInput('server_type', 'disk is smaller than the image');
  const publicNet = (body.public_net ?? {}) as { enable_ipv4?: boolean; enable_ipv6?: boolean };
  const addresses = store.allocateAddresses();
  const server: ServerRecord = {
    id: store.nextId(),
    name,
    status: 'initializing',
    created: isoTime(Date.now()),
    serverType,
    location,
    imageId: image.id,
    files: new Map(image.files ?? []),
    labels,
    userData: userData ?? null,
    ipv4: publicNet.enable_ipv4 === false ? null : addresses.ipv4,
    ipv6: publicNet.enable_ipv6 === false ? null : addresses.ipv6,
    lockedBy: null,
  };
  store.servers.set(server.id, server);
  for (const id of firewalls)
    store.firewalls.get(id)?.appliedTo.push({ type: 'server', server: { id: server.id } });
  const start = body.start_after_create !== false;
  const resources = [{ id: server.id, type: 'server' }];
  // The server stays locked while create_server runs; start_server ends in the same tick.
  const create = context.actions.start('create_server', resources, {
    onSuccess: () => {
      server.lockedBy = null;
      if (!start) server.status = 'off';
    },
    onError: () => {
      server.lockedBy = null;
      server.status = 'off';
    },
  });
  server.lockedBy = create.id;
  const next = start
    ? [
        context.actions.start('start_server', resources, {
          after: create,
          onSuccess: () => {
            server.status = 'running';
          },
          onError: () => {
            server.status = 'off';
          },
        }),
      ]
    : [];
  const hasKeys = Array.isArray(body.ssh_keys) && body.ssh_keys.length > 0;
  return {
    status: 201,
    body: {
      server: serverJson(server, store, context.faults),
      action: context.actions.json(create),
      next_actions: next.map((action) => context.actions.json(action)),
      root_password: hasKeys ? null : randomBytes(12).toString('base64url'),
    },
  };
}

/** Replaces a server's labels (the set given overwrites the existing one); no renaming here. */
function updateServer(context: RouteContext) {
  const server = findServer(context);
  const body = bodyObject(context);
  if (body.name !== undefined) throw invalidInput('name', 'renaming is not in the stand-in');
  if (body.labels !== undefined) server.labels = validateLabels(body.labels);
  return { status: 200, body: { server: serverJson(server, context.store, context.faults) } };
}

function deleteServer(context: RouteContext) {
  const { store } = context;
  const server = findServer(context);
  assertUnlocked(server);
  const before = server.status;
  server.status = 'deleting';
  // Hetzner detaches firewalls with the server; the firewalls themselves stay.
  for (const firewall of store.firewalls.values())
    firewall.appliedTo = firewall.appliedTo.filter(
      (entry) => entry.type !== 'server' || entry.server.id !== server.id,
    );
  const action = context.actions.start('delete_server', [{ id: server.id, type: 'server' }], {
    onSuccess: () => {
      store.servers.delete(server.id);
    },
    onError: () => {
      server.lockedBy = null;
      server.status = before;
    },
  });
  server.lockedBy = action.id;
  return { status: 200, body: { action: context.actions.json(action) } };
}

export const serverRoutes: Route[] = [
  { method: 'GET', template: '/servers', handle: listServers },
  { method: 'POST', template: '/servers', handle: createServer },
  {
    method: 'GET',
    template: '/servers/{id}',
    handle: (context) => ({
      status: 200,
      body: { server: serverJson(findServer(context), context.store, context.faults) },
    }),
  },
  { method: 'PUT', template: '/servers/{id}', handle: updateServer },
  { method: 'DELETE', template: '/servers/{id}', handle: deleteServer },
];
