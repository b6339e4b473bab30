import { SERVER_TYPES } from './catalog.js';
import { HetznerError, invalidInput } from './errors.js';
import { validateLabels } from './label-selector.js';
import { imageJson } from './render.js';
import type { Route, RouteContext } from './router.js';
import { bodyObject } from './router.js';
import { assertUnlocked, byNameOrId, findServer } from './routes-servers.js';
import { type ImageRecord, isoTime, type ServerStatus } from './state.js';

interface PowerAction {
  readonly path: string;
  readonly command: string;
  /** The status while the action runs, and the one it leaves behind on success. */
  readonly during: ServerStatus | 'unchanged';
  readonly after: ServerStatus;
}

// `shutdown` only sends ACPI on Hetzner; the stand-in's guests always obey it.
const POWER_ACTIONS: readonly PowerAction[] = [
  { path: 'poweron', command: 'start_server', during: 'starting', after: 'running' },
  { path: 'poweroff', command: 'stop_server', during: 'stopping', after: 'off' },
  { path: 'shutdown', command: 'shutdown_server', during: 'stopping', after: 'off' },
  { path: 'reboot', command: 'reboot_server', during: 'unchanged', after: 'running' },
  { path: 'reset', command: 'reset_server', during: 'unchanged', after: 'running' },
];

function powerAction(spec: PowerAction) {
  return (context: RouteContext) => {
    const server = findServer(context);
    assertUnlocked(server);
    const before = server.status;
    if (spec.during !== 'unchanged') server.status = spec.during;
    const action = context.actions.start(spec.command, [{ id: server.id, type: 'server' }], {
      onSuccess: () => {
        server.lockedBy = null;
        server.status = spec.after;
      },
      onError: () => {
        server.lockedBy = null;
        server.status = before;
      },
    });
    server.lockedBy = action.id;
    return { status: 201, body: { action: context.actions.json(action) } };
  };
}

function createImage(context: RouteContext) {
  const { store } = context;
  const server = findServer(context);
  const body = bodyObject(context);
  const type = body.type ?? 'snapshot';
  if (type !== 'snapshot') throw invalidInput('type', 'only snapshots are served by the stand-in');
  if (body.description !== undefined && typeof body.description !== 'string')
    throw invalidInput('description', 'must be a string');
  const labels = validateLabels(body.labels);
  assertUnlocked(server);
  const source = store.images.get(server.imageId);
  const image: ImageRecord = {
    id: store.nextId(),
    type: 'snapshot',
    status: 'creating',
    name: null,
    description: body.description ?? `${server.name} snapshot`,
    imageSize: null,
    diskSize: server.serverType.disk,
    created: isoTime(Date.now()),
    createdFrom: { id: server.id, name: server.name },
    osFlavor: source?.osFlavor ?? 'unknown',
    osVersion: source?.osVersion ?? null,
    labels,
    // The disk as it is when the action starts (what a running server has written by then).
    files: new Map(server.files),
  };
  store.images.set(image.id, image);
  const resources = [
    { id: server.id, type: 'server' },
    { id: image.id, type: 'image' },
  ];
  const action = context.actions.start('create_image', resources, {
    onSuccess: () => {
      server.lockedBy = null;
      image.status = 'available';
      image.imageSize = Math.round(image.diskSize * 0.04 * 100) / 100;
    },
    onError: () => {
      // A failed snapshot leaves nothing behind.
      server.lockedBy = null;
      store.images.delete(image.id);
    },
  });
  server.lockedBy = action.id;
  return {
    status: 201,
    body: { image: imageJson(image), action: context.actions.json(action) },
  };
}

/**
 * `change_type` as Hetzner describes it: only on a stopped server, to a type whose disk is at
 * least the server's, the disk growing to the type's only with `upgrade_disk`.
 */
function changeType(context: RouteContext) {
  const server = findServer(context);
  const body = bodyObject(context);
  if (typeof body.upgrade_disk !== 'boolean')
    throw invalidInput('upgrade_disk', 'must be a boolean');
  if (typeof body.server_type !== 'string') throw invalidInput('server_type', 'must be a string');
  const type = SERVER_TYPES.find(
    (each) => each.name === body.server_type || String(each.id) === body.server_type,
  );
  assertUnlocked(server);
  const disk = server.diskGb ?? server.serverType.disk;
  if (!type || type.disk < disk)
    throw new HetznerError(422, 'invalid_server_type', 'the server type does not fit the server');
  if (server.status !== 'off')
    throw new HetznerError(422, 'server_not_stopped', 'the action requires a stopped server');
  const action = context.actions.start('change_server_type', [{ id: server.id, type: 'server' }], {
    onSuccess: () => {
      server.lockedBy = null;
      server.serverType = type;
      server.diskGb = body.upgrade_disk ? type.disk : disk;
    },
    onError: () => {
      server.lockedBy = null;
    },
  });
  server.lockedBy = action.id;
  return { status: 201, body: { action: context.actions.json(action) } };
}

/**
 * `rebuild` as Hetzner describes it: the disk overwritten with the image's content (an id, or a
 * system image's name), the server powered off first; a rebuilt server boots, as Hetzner's do.
 */
function rebuild(context: RouteContext) {
  const { store } = context;
  const server = findServer(context);
  const body = bodyObject(context);
  if (typeof body.image !== 'string') throw invalidInput('image', 'must be a string');
  if (body.user_data !== undefined && typeof body.user_data !== 'string')
    throw invalidInput('user_data', 'must be a string');
  const image = byNameOrId(store.images.values(), body.image);
  if (image?.status !== 'available') throw invalidInput('image', 'image not found');
  if (image.diskSize > (server.diskGb ?? server.serverType.disk))
    throw invalidInput('image', 'the image is larger than the server disk');
  assertUnlocked(server);
  const before = server.status;
  server.status = 'rebuilding';
  const action = context.actions.start('rebuild_server', [{ id: server.id, type: 'server' }], {
    onSuccess: () => {
      server.lockedBy = null;
      server.files = new Map(image.files ?? []);
      server.imageId = image.id;
      server.status = 'running';
    },
    onError: () => {
      server.lockedBy = null;
      server.status = before;
    },
  });
  server.lockedBy = action.id;
  return { status: 201, body: { action: context.actions.json(action), root_password: null } };
}

export const serverActionRoutes: Route[] = [
  ...POWER_ACTIONS.map((spec) => ({
    method: 'POST',
    template: `/servers/{id}/actions/${spec.path}`,
    handle: powerAction(spec),
  })),
  { method: 'POST', template: '/servers/{id}/actions/create_image', handle: createImage },
  { method: 'POST', template: '/servers/{id}/actions/change_type', handle: changeType },
  { method: 'POST', template: '/servers/{id}/actions/rebuild', handle: rebuild },
];
