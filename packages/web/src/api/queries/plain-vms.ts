import {
  createPlainVm,
  deletePlainVm,
  getPlainVm,
  getPlainVmFirewall,
  listOsImages,
  listPlainVms,
  type PlainVm,
  putPlainVmFirewall,
  resizePlainVm,
  restartPlainVm,
  setPlainVmBilling,
  startPlainVm,
  stopPlainVm,
  transferPlainVm,
  updatePlainVm,
} from '@svc/contract';
import type { Query, QueryClient } from '@tanstack/react-query';
import { type CallInput, callEndpoint } from '../client.js';
import { pollWhileTransient } from './transient.js';

export const plainVmsKey = ['plain-vms'] as const;
export const plainVmKey = (id: string) => ['plain-vms', 'detail', id] as const;
export const firewallKey = (id: string) => ['plain-vms', 'firewall', id] as const;

export const plainVmsQuery = (accountId: string) => ({
  queryKey: [...plainVmsKey, 'list', accountId],
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listPlainVms, { query: { accountId } }, { signal }),
  refetchInterval: (query: Query<PlainVm[], Error>) => pollWhileTransient(query.state.data),
});

export const plainVmQuery = (id: string) => ({
  queryKey: plainVmKey(id),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getPlainVm, { params: { id } }, { signal }),
  refetchInterval: (query: Query<PlainVm, Error>) => pollWhileTransient(query.state.data),
});

export const osImagesQuery = () => ({
  queryKey: ['os-images'],
  queryFn: ({ signal }: { signal: AbortSignal }) => callEndpoint(listOsImages, {}, { signal }),
  // Which images the service has changes when its operator imports one: asked again on each visit.
  staleTime: 0,
});

export const firewallQuery = (id: string) => ({
  queryKey: firewallKey(id),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getPlainVmFirewall, { params: { id } }, { signal }),
});

const refresh = (qc: QueryClient) => qc.invalidateQueries({ queryKey: plainVmsKey });

export const createPlainVmMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof createPlainVm>['body']) =>
    callEndpoint(createPlainVm, { body }),
  onSuccess: () => refresh(qc),
});

const ACTIONS = {
  start: startPlainVm,
  stop: stopPlainVm,
  restart: restartPlainVm,
  destroy: deletePlainVm,
};
export type PlainVmAction = keyof typeof ACTIONS;

export const plainVmActionMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (action: PlainVmAction) => callEndpoint(ACTIONS[action], { params: { id } }),
  // After destroy only the lists refresh (in the background, so the page can leave at once):
  // the detail would soon answer 404.
  onSuccess: (_data: unknown, action: PlainVmAction) =>
    action === 'destroy'
      ? void qc.invalidateQueries({ queryKey: [...plainVmsKey, 'list'] })
      : refresh(qc),
  // A refusal usually means the page's picture of the machine is out of date: fetch it again.
  onError: () => refresh(qc),
});

export const transferPlainVmMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (targetAccountId: string) =>
    callEndpoint(transferPlainVm, { params: { id }, body: { targetAccountId } }),
  onSuccess: () => refresh(qc),
});

/** A stopped machine's new size; its slot and the prices shown follow. */
export const plainVmResizeMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (tier: PlainVm['tier']) =>
    callEndpoint(resizePlainVm, { params: { id }, body: { tier } }),
  onSuccess: () => Promise.all([refresh(qc), qc.invalidateQueries({ queryKey: ['slots'] })]),
});

export const plainVmBillingMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (billingType: PlainVm['billingType']) =>
    callEndpoint(setPlainVmBilling, { params: { id }, body: { billingType } }),
  onSuccess: () => Promise.all([refresh(qc), qc.invalidateQueries({ queryKey: ['slots'] })]),
});

export const firewallMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (body: CallInput<typeof putPlainVmFirewall>['body']) =>
    callEndpoint(putPlainVmFirewall, { params: { id }, body }),
  onSuccess: (data: { rules: unknown[] }) => qc.setQueryData(firewallKey(id), data),
});

/** The Plain VM's settings (daily backups), in any state. */
export const updatePlainVmMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (body: CallInput<typeof updatePlainVm>['body']) =>
    callEndpoint(updatePlainVm, { params: { id }, body }),
  onSuccess: () => refresh(qc),
});
