import { NOTICE_KINDS, type NoticeKind } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  noticePreferencesQuery,
  updateNoticePreferencesMutation,
} from '../../api/queries/notices.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';

/** What each notice is about, as the user chooses it. */
const NOTICE_LABELS: Readonly<Record<NoticeKind, string>> = {
  connection_error: 'An app connection stopped working',
  machine_error: 'An Agent or a Plain VM failed (went to error)',
  agent_idle_stopped: 'An Agent was stopped because nobody used it (at most once a day each)',
  subscription_past_due: 'A subscription went past due',
  backup_failed:
    "A machine's daily backup failed on every try of its day (at most once a day each)",
};

/**
 * Which notices the user is mailed about the accounts where they are an owner or admin; each
 * box saves on its own when it changes, and shows its new state at once while it saves (back to
 * the saved one, with the error, if the save fails).
 */
export function NoticesSection() {
  const qc = useQueryClient();
  const preferences = useQuery(noticePreferencesQuery());
  const update = useMutation(updateNoticePreferencesMutation(qc));
  const saving: Partial<Record<NoticeKind, boolean>> = update.isPending
    ? (update.variables ?? {})
    : {};
  return (
    <section>
      <h2>Notices</h2>
      <p className="muted">
        Mail about the accounts where you are an owner or admin, each with a link to the page where
        you act on it.
      </p>
      <QueryView query={preferences} what="notice settings">
        {(data) => (
          <fieldset className="choices">
            <legend>Mail me when</legend>
            {NOTICE_KINDS.map((kind) => (
              <label key={kind}>
                <input
                  type="checkbox"
                  checked={saving[kind] ?? data[kind]}
                  disabled={update.isPending}
                  onChange={(e) => update.mutate({ [kind]: e.target.checked })}
                />
                {NOTICE_LABELS[kind]}
              </label>
            ))}
          </fieldset>
        )}
      </QueryView>
      <ErrorMessage error={update.error} />
    </section>
  );
}
