// The code checks `npm test` runs with type information (typescript-eslint): unused code, promises nobody awaits,
// switches that miss a case of a union, and where the addon may be loaded. A disable comment that silences nothing
// fails the run, so each one left names a real exception.
import tseslint from 'typescript-eslint';

const DLOPEN = { object: 'process', property: 'dlopen', message: 'only the addon loader (src/sea/addon-file.ts) opens a shared object' };
const ENV = {
  object: 'process',
  property: 'env',
  message: "only a front door's entry reads the environment: take the setting from the Config its main made (loadConfig) and handed down",
};
/**
 * The front doors' entries, the only files that read process.env: each reads it once into loadConfig (and the CNI
 * call's own variables). src/sea/cache-dir.ts too: the self-contained executable's addon loader runs while an embedded
 * bundle is being evaluated, before any front door's main, in that bundle's own copy of the module. And
 * src/daemon/thread-pool.ts, which writes the one setting libuv takes from the environment (the daemon's pool size).
 */
const ENV_READERS = ['src/cli/entry.ts', 'src/cli/main.ts', 'src/cni/main.ts', 'src/sea/main.ts', 'src/sea/cache-dir.ts', 'src/daemon/thread-pool.ts'];

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', 'native/**', 'test/fixtures/**', 'test/lab/**', 'test/fuzz/**'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // a require() is a lazy load on purpose (start-up time, an optional module): each one says why
      '@typescript-eslint/no-require-imports': 'error',
      'no-restricted-properties': ['error', DLOPEN],
      'no-restricted-syntax': [
        'error',
        { selector: 'CallExpression[callee.name="require"] Literal[value=/\\.node$/]', message: 'only src/addon-file.ts requires the compiled addon; use src/native.ts' },
      ],
    },
  },
  {
    // stdout carries a command's result (the CNI plugin's one JSON): output goes through the front doors' writers
    files: ['src/**/*.ts'],
    rules: { 'no-console': 'error', 'no-restricted-properties': ['error', DLOPEN, ENV] },
  },
  {
    // nothing below a front door's main reads the environment
    files: ENV_READERS,
    rules: { 'no-restricted-properties': ['error', DLOPEN] },
  },
  {
    files: ['src/addon-file.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['src/sea/addon-file.ts'],
    rules: { 'no-restricted-properties': ['error', ENV] },
  },
);
