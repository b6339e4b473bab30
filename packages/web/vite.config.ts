import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The dashboard lives under `/dashboard/`; the server serves `dist/` there (assets with a long
 * cache, every other `/dashboard/*` path answered with `index.html`). `npm run dev -w @svc/web`
 * proxies `/api` to a service on :8080.
 */
export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, target: 'es2022' },
  server: { proxy: { '/api': 'http://localhost:8080' } },
});
