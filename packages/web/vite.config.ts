import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The dashboard lives under `/dashboard/`; the server serves `dist/` there (assets with a long
 * cache, every other `/dashboard/*` path answered with `index.html`). `npm run dev -w @svc/web`
 * proxies `/api` to a service on :8080.
 *
 * Each page is its own chunk (App.tsx loads them with their route). Two groups are kept whole:
 * React and its libraries, which change least, and the contract with zod. The second must hold
 * `zod-jitless.ts` too: that module turns zod's eval probe off and has to run after zod loads
 * but before any contract schema is built, which only one chunk's order guarantees (split
 * apart, the contract's chunk ran first and the CSP reported the probe on every page).
 */
export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            {
              name: 'react',
              test: /node_modules[\\/](react|react-dom|react-router|scheduler|@tanstack|cookie|set-cookie-parser)[\\/]/,
            },
            {
              name: 'contract',
              test: /node_modules[\\/]zod[\\/]|packages[\\/]contract[\\/]|zod-jitless/,
            },
          ],
        },
      },
    },
  },
  server: { proxy: { '/api': 'http://localhost:8080' } },
});
