// The layers of DESIGN.md ("Layers"), checked on every `npm test`: imports point down only, no cycles, the front
// doors reach the engine through its index alone, and only src/native.ts loads the addon. No breach is let through.

/**
 * Top to bottom: a file may import from its own layer and from layers below it. The packaged executable's entry
 * (src/sea/main.ts) sits on top; the rest of src/sea is what install reads from the executable.
 */
const LAYERS = [
  { name: 'sea-entry', path: '^src/sea/main\\.ts$' },
  { name: 'cli', path: '^src/cli/' },
  { name: 'daemon', path: '^src/daemon/' },
  { name: 'cni', path: '^src/cni/' },
  { name: 'cluster', path: '^src/cluster/' },
  { name: 'install', path: '^src/install/' },
  { name: 'sea', path: '^src/sea/', pathNot: '^src/sea/main\\.ts$' },
  { name: 'lend', path: '^src/lend/' },
  { name: 'ledger', path: '^src/ledger/' },
  { name: 'sriov', path: '^src/sriov/' },
  { name: 'package', path: '^src/package/' },
  { name: 'proc', path: '^src/proc/' },
  // files and locks: the flock is checked with net's argument rules like every other call into the addon
  { name: 'fs', path: '^src/fs/' },
  { name: 'net', path: '^src/net/' },
  { name: 'util', path: '^src/util/' },
  { name: 'config', path: '^src/config\\.ts$' },
  // the addon's typed surface is declared with net's types (type-only: nothing of net runs below it)
  { name: 'native', path: '^src/native\\.ts$', mayImport: '^src/net/types\\.ts$' },
  { name: 'addon-file', path: '^src/addon-file\\.ts$' },
  // the one error class: the addon constructs it, every layer uses it
  { name: 'errors', path: '^src/errors\\.ts$' },
];

const FRONT_DOORS = '^src/(cli|cni|cluster|daemon)/';

const downOnly = LAYERS.slice(1).map((layer, i) => ({
  name: `down-only-${layer.name}`,
  comment: `${layer.name} imports only from its own layer and the layers below it (DESIGN.md, "Layers")`,
  severity: 'error',
  from: { path: layer.path, ...(layer.pathNot ? { pathNot: layer.pathNot } : {}) },
  to: {
    path: LAYERS.slice(0, i + 1).map((above) => above.path),
    ...(layer.mayImport ? { pathNot: layer.mayImport } : {}),
  },
}));

module.exports = {
  forbidden: [
    ...downOnly,
    {
      name: 'every-file-in-a-layer',
      comment: 'a file of src/ outside every layer escapes the layer rules: give its folder a place in LAYERS',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map((l) => l.path) },
      to: {},
    },
    {
      name: 'no-cycles',
      comment: 'modules that import each other, directly or around a circle',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'front-doors-use-engine-index',
      comment: 'the front doors reach the engine only through src/lend/index.ts; its internals and the ledger are its own',
      severity: 'error',
      from: { path: FRONT_DOORS },
      to: { path: '^src/(lend|ledger)/', pathNot: '^src/lend/index\\.ts$' },
    },
    {
      name: 'only-native-loads-addon',
      comment: 'the compiled addon is loaded by src/native.ts alone (through src/addon-file.ts, or the executable\'s copy)',
      severity: 'error',
      from: { pathNot: '^src/native\\.ts$' },
      to: { path: ['\\.node$', '^src/(sea/)?addon-file\\.ts$'] },
    },
  ],
  options: {
    includeOnly: '^src/|\\.node$',
    tsConfig: { fileName: 'tsconfig.json' },
    // type-only imports count: a layer that names a type from above depends on it all the same
    tsPreCompilationDeps: true,
  },
};
