import { LOCATIONS, SERVER_TYPES, serverTypeJson } from './catalog.js';
import { invalidInput, notFound } from './errors.js';
import { paginate } from './pagination.js';
import { idParam, type Route, type RouteContext } from './router.js';

function typeJson(context: RouteContext, entry: (typeof SERVER_TYPES)[number]) {
  return serverTypeJson(entry, (type, location) => context.faults.isUnavailable(type, location));
}

function listServerTypes(context: RouteContext) {
  const name = context.query.get('name');
  const types = SERVER_TYPES.filter((t) => name === null || t.name === name);
  const page = paginate(types, context.query);
  const json = page.items.map((entry) => typeJson(context, entry));
  return { status: 200, body: { server_types: json, meta: { pagination: page.meta } } };
}

function listLocations(context: RouteContext) {
  const name = context.query.get('name');
  const page = paginate(
    LOCATIONS.filter((loc) => name === null || loc.name === name),
    context.query,
  );
  return { status: 200, body: { locations: page.items, meta: { pagination: page.meta } } };
}

/**
 * `GET /actions?id=…` only: listing every action of a project was removed by Hetzner in
 * January 2025 (the description says so), so `id` is required. Unknown ids are left out.
 */
function listActions(context: RouteContext) {
  const ids = context.query.getAll('id');
  if (ids.length === 0) throw invalidInput('id', 'is required');
  const actions = ids
    .map((id) => context.store.actions.get(Number(id)))
    .filter((action) => action !== undefined)
    .map((action) => context.actions.json(action));
  return { status: 200, body: { actions } };
}

export const catalogRoutes: Route[] = [
  { method: 'GET', template: '/server_types', handle: listServerTypes },
  {
    method: 'GET',
    template: '/server_types/{id}',
    handle: (context) => {
      const entry = SERVER_TYPES.find((t) => t.id === idParam(context, 'server type'));
      if (!entry) throw notFound('server type');
      return { status: 200, body: { server_type: typeJson(context, entry) } };
    },
  },
  { method: 'GET', template: '/locations', handle: listLocations },
  {
    method: 'GET',
    template: '/locations/{id}',
    handle: (context) => {
      const location = LOCATIONS.find((loc) => loc.id === idParam(context, 'location'));
      if (!location) throw notFound('location');
      return { status: 200, body: { location } };
    },
  },
  { method: 'GET', template: '/actions', handle: listActions },
  {
    method: 'GET',
    template: '/actions/{id}',
    handle: (context) => {
      const action = context.store.actions.get(idParam(context, 'action'));
      if (!action) throw notFound('action');
      return { status: 200, body: { action: context.actions.json(action) } };
    },
  },
];
