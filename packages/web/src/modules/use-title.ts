import { useEffect } from 'react';

/** The service's name, last in every page's title. */
const SERVICE = 'svc';

/**
 * The page's `<title>`: what it shows first (`Vault`, an Agent's name), then the account when
 * there is one, then the service, so tabs and history tell pages apart.
 */
export function useTitle(...parts: readonly (string | undefined)[]) {
  const title = [...parts.filter(Boolean), SERVICE].join(' · ');
  useEffect(() => {
    document.title = title;
  }, [title]);
}
