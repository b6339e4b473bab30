import type { EmailVerificationMode, User } from '@svc/contract';
import { useMutation } from '@tanstack/react-query';
import { resendVerificationMutation } from '../api/queries/accounts.js';
import { ErrorMessage } from '../components/ErrorMessage.js';

/**
 * Shown on every account page until the user opens the link mailed to their address. When the
 * service requires it, machines cannot be created before, and the notice says so.
 */
export function VerifyEmailBanner(props: { user: User; mode: EmailVerificationMode }) {
  const resend = useMutation(resendVerificationMutation());
  if (props.user.emailVerified) return null;
  const required = props.mode === 'required';
  return (
    <section
      className={`notice verify-banner${required ? ' required' : ''}`}
      aria-label="E-mail verification"
    >
      <p>
        {required ? (
          <strong>Verify your e-mail to create machines. </strong>
        ) : (
          <strong>Your e-mail address is not verified yet. </strong>
        )}
        We sent a link to {props.user.email}; open it to verify the address.
      </p>
      <p className="actions">
        <button
          type="button"
          disabled={resend.isPending || resend.isSuccess}
          onClick={() => resend.mutate()}
        >
          {resend.isPending ? 'Sending…' : 'Send the link again'}
        </button>
        {resend.isSuccess && (
          <span role="status">A new link is on its way to {props.user.email}.</span>
        )}
      </p>
      <ErrorMessage error={resend.error} />
    </section>
  );
}
