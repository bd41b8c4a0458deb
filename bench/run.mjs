// `npm run bench [-- [--strict] [word…]]`: runs every bench/*.bench.mjs (only those whose file name contains one of
// the words, when given) and prints, per comparison, `ratio <what> <median>` and a `# ` line with the spread of the
// alternated rounds' ratios and the verdict, then a summary of targets met, missed and within the spread.
// A bench module's default export is `async (ctx) => void`; it reports with
//   ctx.ratio(what, median, target?, rounds?) — target { max?, min? }, judged on the median; rounds: the
//                                               per-round ratios whose min/max are printed as the spread
//   ctx.log(text)                            — a '# ' comment line (raw timings, setup notes)
// Exit status: 0 when everything was measured, whatever the targets (a benchmark that fails on its own noise
// teaches people to ignore it); 1 when a measurement could not be made (a bench threw, a ratio is not a number);
// 2 for a bad command line; with --strict (CI gates), 3 when a median missed its target.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { judge, ratioLines, summarize, summaryLines } from './report.mjs';

const EXIT_UNMEASURED = 1;
const EXIT_USAGE = 2;
const EXIT_MISSED = 3;

const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith('-'));
const only = args.filter((a) => !a.startsWith('-'));
const unknown = flags.filter((f) => f !== '--strict');
if (unknown.length) {
  console.error(`bench: unknown option ${unknown.join(' ')} (usage: npm run bench -- [--strict] [word…])`);
  process.exit(EXIT_USAGE);
}
const strict = flags.includes('--strict');

// SRIOVCTL_BENCH_DIR: another directory of *.bench.mjs (the runner's own tests point it at fixtures)
const dir = process.env.SRIOVCTL_BENCH_DIR || dirname(fileURLToPath(import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((w) => f.includes(w)))
  .sort();

const judged = [];
let failedBenches = 0;

for (const file of files) {
  const ctx = {
    ratio(what, value, target = {}, rounds = undefined) {
      const j = judge(what, value, target, rounds);
      judged.push(j);
      for (const line of ratioLines(j, file)) console.log(line);
    },
    log(text) {
      console.log(`# ${file}: ${text}`);
    },
  };
  try {
    const mod = await import(pathToFileURL(join(dir, file)).href);
    await mod.default(ctx);
  } catch (err) {
    failedBenches++;
    console.error(`# ${file}: could not measure: ${err?.stack ?? err}`);
  }
}

if (files.length === 0) {
  console.error(`# no bench/*.bench.mjs matched ${only.join(' ')}`);
  failedBenches++;
}
const summary = summarize(judged);
for (const line of summaryLines(summary)) console.log(line);
if (failedBenches) console.log(`# ${failedBenches} bench file(s) could not measure (see above)`);

if (failedBenches || summary.unmeasured.length) process.exitCode = EXIT_UNMEASURED;
else if (strict && summary.medianMissed.length) {
  console.error(`# --strict: ${summary.medianMissed.length} target(s) missed by the median`);
  process.exitCode = EXIT_MISSED;
} else process.exitCode = 0;
