import {
  getNoticePreferences,
  type NoticePreferences,
  updateNoticePreferences,
} from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { callEndpoint } from '../client.js';

export const noticePreferencesKey = ['notice-preferences'] as const;

export const noticePreferencesQuery = () => ({
  queryKey: noticePreferencesKey,
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getNoticePreferences, {}, { signal }),
});

/** The answer holds every kind as stored: it replaces the cached choices. */
export const updateNoticePreferencesMutation = (qc: QueryClient) => ({
  mutationFn: (body: Partial<NoticePreferences>) => callEndpoint(updateNoticePreferences, { body }),
  onSuccess: (preferences: NoticePreferences) => qc.setQueryData(noticePreferencesKey, preferences),
});
