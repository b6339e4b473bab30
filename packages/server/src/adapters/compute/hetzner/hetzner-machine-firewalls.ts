import type { FirewallRule } from '@svc/contract';
import type { Action, ActionWaiter } from './hcloud-actions.js';
import { type HcloudClient, HcloudError, ignoreMissing, sleep } from './hcloud-client.js';
import { fromHcloudRules, toHcloudRules } from './hetzner-firewall-rules.js';
import {
  type HcloudFirewall,
  hcloudLabels,
  MACHINE_LABEL,
  resourceName,
} from './hetzner-server.js';

/** A firewall stays applied a moment after its server's deletion ends. */
const DETACH_TRIES = 10;

/**
 * Each machine's own Hetzner firewall, `svc-<id>` labelled `svc/machine=<id>`. Ids are cached per
 * process once seen (they never change), so the common paths cost no lookup.
 */
export class HetznerFirewalls {
  readonly #ids = new Map<string, number>();

  constructor(
    private readonly client: HcloudClient,
    private readonly actions: ActionWaiter,
  ) {}

  /** Hetzner's id of the machine's firewall, as this process last saw it. */
  idOf(id: string): number | undefined {
    return this.#ids.get(id);
  }

  /**
   * The machine's firewall, made (with `rules`) and applied to its server where missing; `existed`
   * when it was there before. Made first and looked for only when its name is taken.
   */
  async ensure(
    id: string,
    labels: Readonly<Record<string, string>>,
    rules: readonly FirewallRule[],
    serverId?: number,
  ): Promise<{ firewall: HcloudFirewall; existed: boolean }> {
    let firewall: HcloudFirewall | undefined;
    if (this.#ids.has(id) || serverId) [firewall] = await this.of(id);
    if (!firewall) {
      try {
        const made = await this.client.request<{ firewall: HcloudFirewall; actions: Action[] }>(
          'POST',
          '/firewalls',
          {
            body: {
              name: resourceName(id),
              labels: hcloudLabels(id, labels),
              rules: toHcloudRules(rules),
              ...(serverId && { apply_to: [{ type: 'server', server: { id: serverId } }] }),
            },
          },
        );
        this.#ids.set(id, made.firewall.id);
        await this.actions.wait(made.actions);
        return { firewall: made.firewall, existed: false };
      } catch (error) {
        if (!(error instanceof HcloudError && error.code === 'uniqueness_error')) throw error;
        [firewall] = await this.of(id);
        if (!firewall) throw error;
      }
    }
    const applied = firewall.applied_to.some((r) => r.server?.id === serverId);
    if (serverId && !applied) {
      const { actions } = await this.client.request<{ actions: Action[] }>(
        'POST',
        `/firewalls/${firewall.id}/actions/apply_to_resources`,
        { body: { apply_to: [{ type: 'server', server: { id: serverId } }] } },
      );
      await this.actions.wait(actions);
    }
    return { firewall, existed: true };
  }

  /** Replaces the rules; answers with them as Hetzner re-read them once its actions ended. */
  async replace(firewallId: number, rules: readonly FirewallRule[]): Promise<FirewallRule[]> {
    const { actions } = await this.client.request<{ actions: Action[] }>(
      'POST',
      `/firewalls/${firewallId}/actions/set_rules`,
      { body: { rules: toHcloudRules(rules) } },
    );
    await this.actions.wait(actions);
    // Hetzner's own form (canonical IPv6) is the answer, not what was sent.
    const reread = await this.client.request<{ firewall: HcloudFirewall }>(
      'GET',
      `/firewalls/${firewallId}`,
    );
    return fromHcloudRules(reread.firewall.rules);
  }

  async of(id: string): Promise<HcloudFirewall[]> {
    const firewalls = await this.client.list<HcloudFirewall>('/firewalls', 'firewalls', {
      label_selector: `${MACHINE_LABEL}==${id}`,
    });
    if (firewalls[0]) this.#ids.set(id, firewalls[0].id);
    return firewalls;
  }

  /** Deletes the machine's firewall; one still applied to a server being deleted is waited for. */
  async remove(id: string): Promise<void> {
    const known = this.#ids.get(id);
    const firewalls = known === undefined ? await this.of(id) : [{ id: known }];
    for (const firewall of firewalls) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          await ignoreMissing(this.client.request('DELETE', `/firewalls/${firewall.id}`));
          break;
        } catch (error) {
          const inUse = error instanceof HcloudError && error.code === 'resource_in_use';
          if (!inUse || attempt >= DETACH_TRIES) throw error;
          await sleep(1_000 * attempt);
        }
      }
    }
    this.#ids.delete(id);
  }
}
