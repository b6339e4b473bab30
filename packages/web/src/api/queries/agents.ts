import {
  type Agent,
  cloneAgent,
  createAgent,
  deleteAgent,
  getAgent,
  listAgents,
  openAgentGateway,
  resizeAgent,
  restartAgent,
  setAgentBilling,
  startAgent,
  stopAgent,
  transferAgent,
  updateAgent,
} from '@svc/contract';
import type { Query, QueryClient } from '@tanstack/react-query';
import { type CallInput, callEndpoint } from '../client.js';
import { pollWhileTransient } from './transient.js';

export const agentsKey = ['agents'] as const;
export const agentKey = (id: string) => ['agents', 'detail', id] as const;

export const agentsQuery = (accountId: string) => ({
  queryKey: [...agentsKey, 'list', accountId],
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listAgents, { query: { accountId } }, { signal }),
  refetchInterval: (query: Query<Agent[], Error>) => pollWhileTransient(query.state.data),
});

export const agentQuery = (id: string) => ({
  queryKey: agentKey(id),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getAgent, { params: { id } }, { signal }),
  refetchInterval: (query: Query<Agent, Error>) => pollWhileTransient(query.state.data),
});

const refresh = (qc: QueryClient) => qc.invalidateQueries({ queryKey: agentsKey });

export const createAgentMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof createAgent>['body']) => callEndpoint(createAgent, { body }),
  onSuccess: () => refresh(qc),
});

const ACTIONS = { start: startAgent, stop: stopAgent, restart: restartAgent, destroy: deleteAgent };
export type AgentAction = keyof typeof ACTIONS;

export const agentActionMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (action: AgentAction) => callEndpoint(ACTIONS[action], { params: { id } }),
  // After destroy only the lists refresh (in the background, so the page can leave at once):
  // the detail would soon answer 404.
  onSuccess: (_data: unknown, action: AgentAction) =>
    action === 'destroy'
      ? void qc.invalidateQueries({ queryKey: [...agentsKey, 'list'] })
      : refresh(qc),
  // A refusal usually means the page's picture of the machine is out of date: fetch it again.
  onError: () => refresh(qc),
});

export const cloneAgentMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (body: CallInput<typeof cloneAgent>['body']) =>
    callEndpoint(cloneAgent, { params: { id }, body }),
  onSuccess: () => refresh(qc),
});

export const transferAgentMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (targetAccountId: string) =>
    callEndpoint(transferAgent, { params: { id }, body: { targetAccountId } }),
  onSuccess: () => refresh(qc),
});

/** A stopped machine's new size; its slot and the prices shown follow. */
export const agentResizeMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (size: Agent['size']) =>
    callEndpoint(resizeAgent, { params: { id }, body: { size } }),
  onSuccess: () => Promise.all([refresh(qc), qc.invalidateQueries({ queryKey: ['slots'] })]),
});

export const agentBillingMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (billingType: Agent['billingType']) =>
    callEndpoint(setAgentBilling, { params: { id }, body: { billingType } }),
  onSuccess: () => Promise.all([refresh(qc), qc.invalidateQueries({ queryKey: ['slots'] })]),
});

export const updateAgentMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (body: CallInput<typeof updateAgent>['body']) =>
    callEndpoint(updateAgent, { params: { id }, body }),
  onSuccess: () => refresh(qc),
});

export const openAgentMutation = (id: string) => ({
  mutationFn: () => callEndpoint(openAgentGateway, { params: { id } }),
});
