import { invalidInput } from './errors.js';
import { validateLabels } from './label-selector.js';
import { imageJson } from './render.js';
import type { Route, RouteContext } from './router.js';
import { bodyObject } from './router.js';
import { assertUnlocked, findServer } from './routes-servers.js';
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

export const serverActionRoutes: Route[] = [
  ...POWER_ACTIONS.map((spec) => ({
    method: 'POST',
    template: `/servers/{id}/actions/${spec.path}`,
    handle: powerAction(spec),
  })),
  { method: 'POST', template: '/servers/{id}/actions/create_image', handle: createImage },
];
