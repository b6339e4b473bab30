// First: it configures zod before the contract's schemas are built.
import './zod-jitless.js';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { ApiError } from './api/client.js';
import { isSignedOutPage, signInPath } from './modules/return-to.js';
import './styles.css';

// The service also answers `/` with this page; the dashboard's own paths live under /dashboard.
if (!window.location.pathname.startsWith('/dashboard')) {
  window.history.replaceState(null, '', '/dashboard/');
}

// Pages are chunks fetched when first opened. After a new version is deployed, a page left open
// may ask for a chunk that is gone: loading the page again fetches the new version's (once per
// minute at most, so a chunk that fails for another reason does not reload it forever).
window.addEventListener('vite:preloadError', (event) => {
  const last = Number(sessionStorage.getItem('svc.reloaded') ?? 0);
  if (Date.now() - last < 60_000) return;
  event.preventDefault();
  sessionStorage.setItem('svc.reloaded', String(Date.now()));
  window.location.reload();
});

/** A session that ended (expired, signed out elsewhere) sends the page to sign-in, and back after. */
const onError = (error: Error) => {
  if (error instanceof ApiError && error.error === 'unauthorized') {
    if (!isSignedOutPage(window.location.pathname)) {
      window.location.assign(`/dashboard${signInPath()}`);
    }
  }
};

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      refetchOnWindowFocus: true,
      // Only failures that may pass are retried (network, 5xx); a 4xx answer will not change.
      retry: (count, error) =>
        count < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500),
    },
  },
});

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  );
}
