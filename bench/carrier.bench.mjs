// A NIC without carrier (its veth peer down, as a cable out or a VF whose PF has no link): ADD+DEL through the shim +
// daemon against Debian's host-device on it, same `static` IPAM — and, in the same alternated rounds, both on a NIC
// with carrier (the world's own), for the reader to see what the missing carrier costs each. host-device never waits
// for a carrier; the one-shot sriovctl-cni waits up to 200 ms for one (as sriov-cni); the daemon answers at once and
// watches for the carrier off the call (each DEL here stops that watch). The same without carrier settled, as
// daemon.bench.mjs's: SETTLE_MS between ADD and DEL. Needs root, `npm run build` and /usr/lib/cni.
import { existsSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, roundRatios } from './bench-helpers.mjs';
import { alternate, alternateSettled, CNI_DIR, ipIfThere, SETTLE_MS, withCniWorld } from './cni-world.mjs';
import { startDaemon } from './daemon-process.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SHIM = join(ROOT, 'build', 'Release', 'sriovctl-cni');
const ROUNDS = Number(process.env.CNI_BENCH_ROUNDS) || 101;

export default async function carrierBench(ctx) {
  if (!existsSync(SHIM)) throw new Error(`${SHIM} is missing (npm ci / node-gyp rebuild)`);
  await withCniWorld(ctx, async ({ scratch, ours, theirs, call, hostDevice }) => {
    // a second NIC beside the world's: its peer stays down, so it never gets a carrier
    const dark = `${ours.device.slice(0, -1)}d`;
    execFileSync('ip', ['link', 'add', dark, 'type', 'veth', 'peer', 'name', `${dark}p`]);
    const oursDark = { ...ours, device: dark };
    const theirsDark = { ...theirs, device: dark };
    mkdirSync(join(scratch, 'run'), { mode: 0o700 });
    const socket = join(scratch, 'run', 'cni.sock');
    const daemon = await startDaemon(socket);
    try {
      const viaDaemon = { env: { SRIOVCTL_SOCKET: socket } };
      const pair = (argv, config, opts) => () => {
        call(argv, config, 'ADD', opts);
        call(argv, config, 'DEL', opts);
      };
      const contenders = {
        shimDaemon: pair([SHIM], oursDark, viaDaemon),
        hostDevice: pair([join(CNI_DIR, 'host-device')], theirsDark),
        shimDaemonCarrier: pair([SHIM], ours, viaDaemon),
        hostDeviceCarrier: hostDevice,
      };
      for (const c of Object.values(contenders)) c();
      const t = alternate(contenders, ROUNDS);
      const ms = (name) => median(t[name]).toFixed(1);
      ctx.log(`ADD+DEL median without carrier: shim+daemon ${ms('shimDaemon')} ms, host-device ${ms('hostDevice')} ms; with carrier: ${ms('shimDaemonCarrier')} ms, ${ms('hostDeviceCarrier')} ms (${ROUNDS} alternated rounds)`);
      ctx.ratio('shim+daemon/host-device:add+del-no-carrier', median(t.shimDaemon) / median(t.hostDevice), { max: 1.0 }, roundRatios(t.shimDaemon, t.hostDevice));
      ctx.ratio('shim+daemon/host-device:add+del-with-carrier', median(t.shimDaemonCarrier) / median(t.hostDeviceCarrier), {}, roundRatios(t.shimDaemonCarrier, t.hostDeviceCarrier));

      const settled = alternateSettled(
        { shimDaemon: (verb) => call([SHIM], oursDark, verb, viaDaemon), hostDevice: (verb) => call([join(CNI_DIR, 'host-device')], theirsDark, verb) },
      );
      ctx.log(`settled without carrier (${SETTLE_MS} ms between ADD and DEL, ${settled.shimDaemon.pair.length} alternated rounds), pair medians: shim+daemon ${median(settled.shimDaemon.pair).toFixed(1)} ms, host-device ${median(settled.hostDevice.pair).toFixed(1)} ms`);
      // reported beside the back-to-back ratio, whose target stands
      ctx.ratio('shim+daemon/host-device:add+del-no-carrier-settled', median(settled.shimDaemon.pair) / median(settled.hostDevice.pair), {}, roundRatios(settled.shimDaemon.pair, settled.hostDevice.pair));
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
      ipIfThere('link', 'del', dark);
    }
  });
}
