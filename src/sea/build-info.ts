// What scripts/package/ fixes into the self-contained executable at build time (esbuild `define`).
declare const SRIOVCTL_ADDON_SHA256: string;

/** SHA-256 (hex) of the addon embedded as an asset; it is loaded only when its bytes have this hash. */
export const ADDON_SHA256: string = SRIOVCTL_ADDON_SHA256;

/**
 * The asset names (the SEA config's `assets` keys, scripts/package/sea.mjs). The payload's files (the launcher,
 * the private glibc: src/package/payload-layout.ts) are `payload/<path in the payload>`, listed in `payload.json`; the
 * static native shim install-cni puts in front of them (native/shim/) is `sriovctl-cni-shim`.
 */
export const ASSET = {
  addon: 'sriovctl.node',
  cniRun: 'sriovctl-cni-run.js',
  cli: 'sriovctl-cli.js',
  payloadManifest: 'payload.json',
  payloadPrefix: 'payload/',
  shim: 'sriovctl-cni-shim',
  /** The daemon's namespace search worker (src/lend/namespace-search-worker.ts), run from its text. */
  searchWorker: 'namespace-search-worker.js',
} as const;
