import {
  deleteSlot,
  getPrices,
  getUpcomingInvoice,
  getUsage,
  listInvoices,
  listSlots,
} from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { callEndpoint } from '../client.js';

export const slotsKey = (accountId: string) => ['slots', accountId] as const;
export const upcomingInvoiceKey = (accountId: string) => ['upcoming-invoice', accountId] as const;

/** The price book changes only when the service restarts with another price file. */
export const pricesQuery = () => ({
  queryKey: ['prices'] as const,
  queryFn: ({ signal }: { signal: AbortSignal }) => callEndpoint(getPrices, {}, { signal }),
  staleTime: Number.POSITIVE_INFINITY,
});

export const slotsQuery = (accountId: string) => ({
  queryKey: slotsKey(accountId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listSlots, { params: { id: accountId } }, { signal }),
});

/** A removed slot leaves the running bill's projection too. */
export const deleteSlotMutation = (qc: QueryClient, accountId: string) => ({
  mutationFn: (slotId: string) => callEndpoint(deleteSlot, { params: { id: accountId, slotId } }),
  onSuccess: () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: slotsKey(accountId) }),
      qc.invalidateQueries({ queryKey: upcomingInvoiceKey(accountId) }),
    ]),
});

export const usageQuery = (accountId: string) => ({
  queryKey: ['usage', accountId] as const,
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getUsage, { params: { id: accountId } }, { signal }),
});

/**
 * Owners and admins only: members get 403, so the billing page does not ask for them. The bill
 * runs by the second and any machine's change moves it: read again each time it is shown.
 */
export const upcomingInvoiceQuery = (accountId: string) => ({
  queryKey: upcomingInvoiceKey(accountId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getUpcomingInvoice, { params: { id: accountId } }, { signal }),
  staleTime: 0,
});

/** Owners and admins only, like the upcoming invoice. */
export const invoicesQuery = (accountId: string) => ({
  queryKey: ['invoices', accountId] as const,
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listInvoices, { params: { id: accountId } }, { signal }),
});
