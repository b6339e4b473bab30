import {
  HetznerError,
  invalidInput,
  notFound,
  resourceLimitExceeded,
  uniquenessError,
} from './errors.js';
import { parseRules } from './firewall-rules.js';
import { parseLabelSelector, validateLabels } from './label-selector.js';
import { paginate } from './pagination.js';
import { firewallJson, isAppliedTo } from './render.js';
import { bodyObject, idParam, type Route, type RouteContext } from './router.js';
import { type AppliedTo, type FirewallRecord, isoTime, type ServerRecord } from './state.js';

function findFirewall(context: RouteContext): FirewallRecord {
  const firewall = context.store.firewalls.get(idParam(context, 'firewall'));
  if (!firewall) throw notFound('firewall');
  return firewall;
}

interface TargetInput {
  type?: unknown;
  server?: { id?: unknown };
  label_selector?: { selector?: unknown };
}

/** `apply_to` / `remove_from` entries: servers must exist, selectors must parse. */
function parseTargets(context: RouteContext, value: unknown, field: string): AppliedTo[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidInput(field, 'must be a list');
  return value.map((entry: TargetInput | null) => {
    if (entry?.type === 'server') {
      const id = entry.server?.id;
      if (typeof id !== 'number' || !context.store.servers.has(id))
        throw new HetznerError(
          422,
          'firewall_resource_not_found',
          `server ${String(id)} not found`,
        );
      return { type: 'server', server: { id } };
    }
    if (entry?.type === 'label_selector') {
      const selector = entry.label_selector?.selector;
      if (typeof selector !== 'string')
        throw invalidInput(field, 'label_selector.selector missing');
      parseLabelSelector(selector);
      return { type: 'label_selector', label_selector: { selector } };
    }
    throw invalidInput(field, 'type must be server or label_selector');
  });
}

function sameTarget(a: AppliedTo, b: AppliedTo): boolean {
  if (a.type === 'server' && b.type === 'server') return a.server.id === b.server.id;
  if (a.type === 'label_selector' && b.type === 'label_selector')
    return a.label_selector.selector === b.label_selector.selector;
  return false;
}

/** The servers a target reaches now (a selector may reach none). */
function serversOf(context: RouteContext, target: AppliedTo): ServerRecord[] {
  const firewall = { appliedTo: [target] } as FirewallRecord;
  return [...context.store.servers.values()].filter((server) => isAppliedTo(firewall, server));
}

/** One action per firewall and server, as Hetzner answers firewall changes. */
function perServer(
  context: RouteContext,
  command: string,
  fw: FirewallRecord,
  targets: AppliedTo[],
) {
  const servers = new Set(targets.flatMap((target) => serversOf(context, target)));
  return [...servers].map((server) =>
    context.actions.json(
      context.actions.start(command, [
        { id: fw.id, type: 'firewall' },
        { id: server.id, type: 'server' },
      ]),
    ),
  );
}

function listFirewalls(context: RouteContext) {
  const { query } = context;
  const selector = query.get('label_selector');
  const matches = selector ? parseLabelSelector(selector) : () => true;
  const name = query.get('name');
  const firewalls = [...context.store.firewalls.values()].filter(
    (fw) => matches(fw.labels) && (name === null || fw.name === name),
  );
  const page = paginate(firewalls, query);
  const json = page.items.map((fw) => firewallJson(fw, context.store));
  return { status: 200, body: { firewalls: json, meta: { pagination: page.meta } } };
}

function createFirewall(context: RouteContext) {
  const { store } = context;
  const body = bodyObject(context);
  const name = body.name;
  if (typeof name !== 'string' || name === '') throw invalidInput('name', 'is required');
  const labels = validateLabels(body.labels);
  const rules = parseRules(body.rules);
  const targets = parseTargets(context, body.apply_to, 'apply_to');
  if ([...store.firewalls.values()].some((fw) => fw.name === name)) throw uniquenessError('name');
  if (context.limits.firewalls !== undefined && store.firewalls.size >= context.limits.firewalls)
    throw resourceLimitExceeded('firewall_limit');
  const firewall: FirewallRecord = {
    id: store.nextId(),
    name,
    labels,
    created: isoTime(Date.now()),
    rules,
    appliedTo: targets,
  };
  store.firewalls.set(firewall.id, firewall);
  const actions = perServer(context, 'apply_firewall', firewall, targets);
  return { status: 201, body: { firewall: firewallJson(firewall, store), actions } };
}

function deleteFirewall(context: RouteContext) {
  const firewall = findFirewall(context);
  if (firewall.appliedTo.length > 0)
    throw new HetznerError(422, 'resource_in_use', 'firewall is still applied to resources');
  context.store.firewalls.delete(firewall.id);
  return { status: 204 };
}

function setRules(context: RouteContext) {
  const firewall = findFirewall(context);
  const body = bodyObject(context);
  if (!Array.isArray(body.rules)) throw invalidInput('rules', 'is required');
  firewall.rules = parseRules(body.rules);
  const setAction = context.actions.start('set_firewall_rules', [
    { id: firewall.id, type: 'firewall' },
  ]);
  const applied = perServer(context, 'apply_firewall', firewall, firewall.appliedTo);
  return { status: 201, body: { actions: [context.actions.json(setAction), ...applied] } };
}

function applyTo(context: RouteContext) {
  const firewall = findFirewall(context);
  const targets = parseTargets(context, bodyObject(context).apply_to, 'apply_to');
  if (targets.some((target) => firewall.appliedTo.some((have) => sameTarget(have, target))))
    throw new HetznerError(422, 'firewall_already_applied', 'firewall is already applied');
  firewall.appliedTo.push(...targets);
  const actions = perServer(context, 'apply_firewall', firewall, targets);
  return { status: 201, body: { actions } };
}

function removeFrom(context: RouteContext) {
  const firewall = findFirewall(context);
  const targets = parseTargets(context, bodyObject(context).remove_from, 'remove_from');
  if (!targets.every((target) => firewall.appliedTo.some((have) => sameTarget(have, target))))
    throw new HetznerError(422, 'firewall_already_removed', 'firewall is not applied there');
  const actions = perServer(context, 'remove_firewall', firewall, targets);
  firewall.appliedTo = firewall.appliedTo.filter(
    (have) => !targets.some((target) => sameTarget(have, target)),
  );
  return { status: 201, body: { actions } };
}

export const firewallRoutes: Route[] = [
  { method: 'GET', template: '/firewalls', handle: listFirewalls },
  { method: 'POST', template: '/firewalls', handle: createFirewall },
  {
    method: 'GET',
    template: '/firewalls/{id}',
    handle: (context) => ({
      status: 200,
      body: { firewall: firewallJson(findFirewall(context), context.store) },
    }),
  },
  { method: 'DELETE', template: '/firewalls/{id}', handle: deleteFirewall },
  { method: 'POST', template: '/firewalls/{id}/actions/set_rules', handle: setRules },
  { method: 'POST', template: '/firewalls/{id}/actions/apply_to_resources', handle: applyTo },
  { method: 'POST', template: '/firewalls/{id}/actions/remove_from_resources', handle: removeFrom },
];
