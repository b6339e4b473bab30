import { CopyButton } from '../../components/CopyButton.js';

/** The one-time password: shown on this page only, never again. */
export function InitialPassword({ password }: { password: string }) {
  return (
    <div className="notice" role="status">
      <p>
        <strong>One-time password</strong> — copy it now; it is not shown again.
      </p>
      <p>
        <code className="secret" data-testid="initial-password">
          {password}
        </code>{' '}
        <CopyButton text={password} label="Copy password" />
      </p>
    </div>
  );
}
