import { useEffect, useState } from 'react';
import { CopyButton } from '../components/CopyButton.js';

/**
 * A new Plain VM's one-time password, from the create answer to the VM's page: held in this
 * tab's memory only (never the URL or the history's state, which outlive the page), and taken by
 * the first page that shows it, so a reload or a later visit no longer has it.
 */
const kept = new Map<string, string>();

export const keepInitialPassword = (vmId: string, password: string) => kept.set(vmId, password);

/** The VM's one-time password if it was just created in this tab; the page keeps it while open. */
export function useInitialPassword(vmId: string): string | undefined {
  const [password] = useState(() => kept.get(vmId));
  useEffect(() => {
    kept.delete(vmId);
  }, [vmId]);
  return password;
}

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
