// `npm run bench`: runs every bench/*.bench.mjs (optionally only those whose file name contains one of the
// command-line words) and prints one line per comparison: `ratio <what> <number>`.
// A bench module's default export is `async (ctx) => void`; it reports with
//   ctx.ratio(what, value, { max?, min? })   — a ratio line, checked against its target when given
//   ctx.log(text)                            — a '# ' comment line (raw timings, setup notes)
// Exit status 1 when a bench throws or a ratio misses its target.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((w) => f.includes(w)))
  .sort();

const format = (v) => (Number.isFinite(v) ? String(Number(v.toPrecision(4))) : String(v));
let failures = 0;

for (const file of files) {
  const missed = [];
  const ctx = {
    ratio(what, value, target = {}) {
      console.log(`ratio ${what} ${format(value)}`);
      if (target.max !== undefined && !(value <= target.max)) missed.push(`${what} ${format(value)} > ${target.max}`);
      if (target.min !== undefined && !(value >= target.min)) missed.push(`${what} ${format(value)} < ${target.min}`);
    },
    log(text) {
      console.log(`# ${file}: ${text}`);
    },
  };
  try {
    const mod = await import(pathToFileURL(join(dir, file)).href);
    await mod.default(ctx);
  } catch (err) {
    failures++;
    console.error(`# ${file}: failed: ${err?.stack ?? err}`);
  }
  for (const m of missed) console.error(`# ${file}: target missed: ${m}`);
  failures += missed.length;
}
if (files.length === 0) console.error('# no bench/*.bench.mjs matched');
process.exitCode = failures ? 1 : 0;
