import type { HcloudClient } from './hcloud-client.js';
import type { GatewayPins } from './hetzner-gateways.js';
import type { HcloudServer } from './hetzner-server.js';

/**
 * The label on an Agent's server that pins its gateway's key (`keyFingerprint`). Outside the
 * `svc/` prefix: it is none of the machine's own labels (`labelsOf`), and a clone, made with its
 * own labels, enrolls its own key.
 */
export const GATEWAY_PIN_LABEL = 'svc-gateway/key-sha256';

/**
 * Gateway pins kept on the machines' servers, where Hetzner keeps them for the server's life:
 * every process of the service sees them, and they go with the server. `find` is the driver's
 * lookup of a machine's server.
 */
export function serverLabelPins(
  client: HcloudClient,
  find: (machineId: string) => Promise<HcloudServer | undefined>,
): GatewayPins {
  return {
    async read(machineId) {
      return (await find(machineId))?.labels[GATEWAY_PIN_LABEL] || undefined;
    },
    async record(machineId, fingerprint) {
      const server = await find(machineId);
      if (!server) throw new Error(`no server for machine ${machineId} in Hetzner Cloud`);
      // The labels given replace the server's: all of them, with the pin.
      await client.request('PUT', `/servers/${server.id}`, {
        body: { labels: { ...server.labels, [GATEWAY_PIN_LABEL]: fingerprint } },
      });
    },
  };
}
