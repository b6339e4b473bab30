import { deleteSlot, getUsage, listSlots } from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { callEndpoint } from '../client.js';

export const slotsKey = (accountId: string) => ['slots', accountId] as const;

export const slotsQuery = (accountId: string) => ({
  queryKey: slotsKey(accountId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listSlots, { params: { id: accountId } }, { signal }),
});

export const deleteSlotMutation = (qc: QueryClient, accountId: string) => ({
  mutationFn: (slotId: string) => callEndpoint(deleteSlot, { params: { id: accountId, slotId } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: slotsKey(accountId) }),
});

export const usageQuery = (accountId: string) => ({
  queryKey: ['usage', accountId] as const,
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getUsage, { params: { id: accountId } }, { signal }),
});
