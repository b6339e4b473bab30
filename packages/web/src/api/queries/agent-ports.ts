import {
  type AgentPort,
  listAgentPorts,
  openAgentPort,
  type PortShare,
  shareAgentPort,
  unshareAgentPort,
} from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { callEndpoint } from '../client.js';

export const agentPortsKey = (id: string) => ['agents', 'ports', id] as const;

/** How often the list asks again: a dev server started inside shows up without a reload. */
const LISTENING_REFRESH_MS = 15_000;

export const agentPortsQuery = (id: string) => ({
  queryKey: agentPortsKey(id),
  queryFn: ({ signal }: { signal: AbortSignal }): Promise<AgentPort[]> =>
    callEndpoint(listAgentPorts, { params: { id } }, { signal }),
  refetchInterval: LISTENING_REFRESH_MS,
});

export const shareAgentPortMutation = (qc: QueryClient, id: string) => ({
  mutationFn: ({ port, share }: { port: number; share: PortShare }) =>
    callEndpoint(shareAgentPort, { params: { id, port }, body: { share } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: agentPortsKey(id) }),
});

export const unshareAgentPortMutation = (qc: QueryClient, id: string) => ({
  mutationFn: (port: number) => callEndpoint(unshareAgentPort, { params: { id, port } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: agentPortsKey(id) }),
});

export const openAgentPortMutation = (id: string, port: number) => ({
  mutationFn: (next: string) =>
    callEndpoint(openAgentPort, { params: { id, port }, body: { next } }),
});
