import { acceptingStates, canApply, type MachineAction, type MachineState } from '@svc/contract';

/** The kinds of machine, in the product's words. */
export type MachineKind = 'Agent' | 'Plain VM';

/** `a`, `a or b`, `a, b or c`. */
export const listOr = (items: readonly string[]) =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

const listAnd = (items: readonly string[]) =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/**
 * Why the button `label` (doing `action`) is disabled for a machine in `status`, from the states
 * the action accepts ("Start needs a stopped Plain VM."); nothing while it is possible.
 */
export function whyNot(
  action: MachineAction,
  label: string,
  status: MachineState,
  kind: MachineKind,
): string | undefined {
  return canApply(action, status) ? undefined : needs([label], action, kind);
}

const needs = (labels: readonly string[], action: MachineAction, kind: MachineKind) =>
  `${listAnd(labels)} ${labels.length > 1 ? 'need' : 'needs'} a ${listOr(acceptingStates(action))} ${kind}.`;

/**
 * One sentence for several buttons, those that need the same states said together ("Stop and
 * Restart need a running Agent. Start needs a stopped Agent.").
 */
export function whyNotAll(
  buttons: readonly { action: MachineAction; label: string }[],
  status: MachineState,
  kind: MachineKind,
): string | undefined {
  const byStates = new Map<string, { action: MachineAction; labels: string[] }>();
  for (const { action, label } of buttons) {
    if (canApply(action, status)) continue;
    const key = acceptingStates(action).join();
    const group = byStates.get(key) ?? { action, labels: [] };
    group.labels.push(label);
    byStates.set(key, group);
  }
  const sentences = [...byStates.values()].map((g) => needs(g.labels, g.action, kind));
  return sentences.length ? sentences.join(' ') : undefined;
}
