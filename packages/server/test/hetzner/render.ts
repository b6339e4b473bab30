import { datacenterOf, SERVER_TYPES, serverTypeJson } from './catalog.js';
import type { FaultSet } from './faults.js';
import { parseLabelSelector } from './label-selector.js';
import type { FirewallRecord, ImageRecord, ServerRecord, Store } from './state.js';

/** Whether the firewall reaches the server, directly or through a label selector. */
export function isAppliedTo(firewall: FirewallRecord, server: ServerRecord): boolean {
  return firewall.appliedTo.some((entry) =>
    entry.type === 'server'
      ? entry.server.id === server.id
      : parseLabelSelector(entry.label_selector.selector)(server.labels),
  );
}

export function imageJson(image: ImageRecord) {
  return {
    id: image.id,
    type: image.type,
    status: image.status,
    name: image.name,
    description: image.description,
    image_size: image.imageSize,
    disk_size: image.diskSize,
    created: image.created,
    created_from: image.createdFrom,
    bound_to: null,
    os_flavor: image.osFlavor,
    os_version: image.osVersion,
    rapid_deploy: image.type === 'system',
    protection: { delete: false },
    deprecated: null,
    deleted: null,
    labels: { ...image.labels },
    architecture: 'x86',
  };
}

/** The server object with all 20 fields the description requires. */
export function serverJson(server: ServerRecord, store: Store, faults: FaultSet) {
  const image = store.images.get(server.imageId);
  const firewalls = [...store.firewalls.values()].filter((fw) => isAppliedTo(fw, server));
  return {
    id: server.id,
    name: server.name,
    status: server.status,
    created: server.created,
    public_net: {
      ipv4: server.ipv4 && { ...server.ipv4, blocked: false, dns_ptr: `static.${server.id}.test` },
      ipv6: server.ipv6 && { ...server.ipv6, blocked: false, dns_ptr: [] },
      floating_ips: [],
      firewalls: firewalls.map((fw) => ({ id: fw.id, status: 'applied' })),
    },
    private_net: [],
    server_type: serverTypeJson(server.serverType, (t, l) => faults.isUnavailable(t, l)),
    location: server.location,
    datacenter: datacenterOf(
      server.location,
      SERVER_TYPES.filter((t) => t.locations.includes(server.location.name)).map((t) => t.id),
    ),
    image: image ? imageJson(image) : null,
    iso: null,
    rescue_enabled: false,
    locked: server.lockedBy !== null,
    backup_window: null,
    outgoing_traffic: 0,
    ingoing_traffic: 0,
    included_traffic: 21990232555520,
    protection: { delete: false, rebuild: false },
    labels: { ...server.labels },
    volumes: [],
    load_balancers: [],
    primary_disk_size: server.serverType.disk,
    placement_group: null,
  };
}

export function firewallJson(firewall: FirewallRecord, store: Store) {
  return {
    id: firewall.id,
    name: firewall.name,
    labels: { ...firewall.labels },
    created: firewall.created,
    rules: firewall.rules.map((rule) => ({ ...rule })),
    applied_to: firewall.appliedTo.map((entry) =>
      entry.type === 'server'
        ? { type: 'server', server: { id: entry.server.id } }
        : {
            type: 'label_selector',
            label_selector: { selector: entry.label_selector.selector },
            applied_to_resources: [...store.servers.values()]
              .filter((server) => parseLabelSelector(entry.label_selector.selector)(server.labels))
              .map((server) => ({ type: 'server', server: { id: server.id } })),
          },
    ),
  };
}
