// A node's ledger at scale: a pod's ADD and its DEL through the shim + daemon with OTHER_RECORDS other pods' records
// in the ledger (copies of a real one under other keys and owners) against the same in an empty ledger, alternated in
// the same rounds (each call names its state dir). The crowded ledger starts without an owner index, as one written
// by an older sriovctl: its first DEL rebuilds it (not timed, like any warm-up). Then `status` with 500 records against
// 10, per record (./status-scale.mjs). Needs root, `npm run build` and /usr/lib/cni.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, rotate, roundRatios } from './bench-helpers.mjs';
import { elapsedMs, withCniWorld } from './cni-world.mjs';
import { startDaemon } from './daemon-process.mjs';
import { statusScale } from './status-scale.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SHIM = join(ROOT, 'build', 'Release', 'sriovctl-cni');
const ROUNDS = Number(process.env.CNI_BENCH_ROUNDS) || 101;
const OTHER_RECORDS = Number(process.env.LEDGER_BENCH_RECORDS) || 1000;

export default async function ledgerScaleBench(ctx) {
  if (!existsSync(SHIM)) throw new Error(`${SHIM} is missing (npm ci / node-gyp rebuild)`);
  await withCniWorld(ctx, async ({ scratch, env: worldEnv, ours, call }) => {
    mkdirSync(join(scratch, 'run'), { mode: 0o700 });
    const socket = join(scratch, 'run', 'cni.sock');
    const daemon = await startDaemon(socket);
    try {
      const record = realRecord(worldEnv.SRIOVCTL_STATE_DIR, call, ours, { env: { SRIOVCTL_SOCKET: socket } });
      // two state dirs made alike, one with the other pods' records and one without
      const ledgerOf = (name, records) => ({ env: { SRIOVCTL_SOCKET: socket, SRIOVCTL_STATE_DIR: ledgerWith(join(scratch, name), record, records) } });
      const contenders = { crowded: ledgerOf('crowded', OTHER_RECORDS), alone: ledgerOf('alone', 0) };
      for (const opts of Object.values(contenders)) {
        call([SHIM], ours, 'ADD', opts);
        call([SHIM], ours, 'DEL', opts);
      }
      const add = { crowded: [], alone: [] };
      const del = { crowded: [], alone: [] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const name of rotate(Object.keys(contenders), r)) {
          add[name].push(elapsedMs(() => call([SHIM], ours, 'ADD', contenders[name]))[0]);
          del[name].push(elapsedMs(() => call([SHIM], ours, 'DEL', contenders[name]))[0]);
        }
      }
      const ms = (t, name) => median(t[name]).toFixed(1);
      ctx.log(`through the daemon, with ${OTHER_RECORDS} other pods' records / alone (${ROUNDS} alternated rounds): ADD ${ms(add, 'crowded')} / ${ms(add, 'alone')} ms, DEL ${ms(del, 'crowded')} / ${ms(del, 'alone')} ms`);
      ctx.ratio(`shim+daemon:del-among-${OTHER_RECORDS}-records/alone`, median(del.crowded) / median(del.alone), { max: 1.05 }, roundRatios(del.crowded, del.alone));
      ctx.ratio(`shim+daemon:add-among-${OTHER_RECORDS}-records/alone`, median(add.crowded) / median(add.alone), { max: 1.05 }, roundRatios(add.crowded, add.alone));
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
    }
  });
  await statusScale(ctx);
}

/** The world's real record, taken while its NIC is lent. */
function realRecord(stateDir, call, ours, viaDaemon) {
  call([SHIM], ours, 'ADD', viaDaemon);
  try {
    const [file] = readdirSync(join(stateDir, 'records')).filter((f) => f.endsWith('.json'));
    return JSON.parse(readFileSync(join(stateDir, 'records', file), 'utf8'));
  } finally {
    call([SHIM], ours, 'DEL', viaDaemon);
  }
}

/** A state dir at `dir` holding `count` copies of `record` under other keys and owners, and no owner index. */
function ledgerWith(dir, record, count) {
  mkdirSync(join(dir, 'records'), { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  for (let i = 0; i < count; i++) {
    const key = `mac-02ee${String(i).padStart(8, '0')}`;
    writeFileSync(join(dir, 'records', `${key}.json`), JSON.stringify({ ...record, key, owner: `cni:other-pod-${i}/net1` }, null, 2), { mode: 0o600 });
  }
  return dir;
}
