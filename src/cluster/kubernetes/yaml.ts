// The YAML library, loaded on first use: it costs ~90 ms to load on a small machine, and the local lab without
// --manifests never needs it (the cluster commands are a fresh process each time).
let loaded: typeof import('yaml') | null = null;

export function yaml(): typeof import('yaml') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (above)
  loaded ??= require('yaml') as typeof import('yaml');
  return loaded;
}
