// `node inject.mjs <executable> <blob>`: postject's injection of a SEA blob, in a process of its own so the two
// architectures inject in parallel (it is synchronous WebAssembly, ~8 s on a 97 MB binary here). LIEF's
// warnings about the runtime's note sections are noise: stderr is shown only when the injection fails.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const { inject } = createRequire(import.meta.url)('postject');
const [file, blob] = process.argv.slice(2);
await inject(file, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2' });
