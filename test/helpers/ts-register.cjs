// `node -r test/helpers/ts-register.cjs child.ts`: lets a test run a TypeScript file of this repository in a
// separate process (locks, crashes and timeouts need real processes). Each .ts file is compiled on load with
// esbuild (already a dependency); registering '.ts' also makes extension-less imports ('../net') resolve.
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const { transformSync } = require('esbuild');

Module._extensions['.ts'] = function compileTs(module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    loader: 'ts',
    format: 'cjs',
    target: 'node20',
    sourcefile: filename,
    sourcemap: 'inline',
  });
  module._compile(code, filename);
};
