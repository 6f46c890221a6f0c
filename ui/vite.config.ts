import { defineConfig } from 'vite';

// The web UI, built into ui/dist, which the service serves at /. Its Content-Security-Policy allows no inline
// script or style, so the build must emit none: no module-preload polyfill (every supported browser has modulepreload).
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    sourcemap: false,
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080' } },
});
