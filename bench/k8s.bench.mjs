// A pod's life on a one-node Kubernetes cluster (test/k8s: etcd, the API server, kubelet, containerd, thin Multus,
// sriovctl installed by its image and DaemonSet) through a NetworkAttachmentDefinition of type sriovctl-cni, against
// the same through Debian's host-device, each on a veth stand-in NIC of its own: the pod created, until it runs
// (the NIC in it), deleted, until the API forgets it and the NIC is home. Alternated rounds, medians.
// Prints `ratio sriovctl/host-device:k8s-pod-cycle` (target ≤ 1.0) and the medians.
// Skipped, with a line saying why, when the tier's components are not built (scripts/ensure-k8s.sh: about 50
// minutes cold on 2 cores) or the installer image is not packaged (npm run package).
import { copyFileSync, existsSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, rotate, roundRatios, timeMs } from './bench-helpers.mjs';

const require = createRequire(import.meta.url);
const ROUNDS = Number(process.env.BENCH_K8S_ROUNDS || 7);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** ensure-k8s.sh's line naming the first component not built yet (it builds nothing here), or null when all are. */
function unbuiltComponent() {
  const r = spawnSync('bash', [join(ROOT, 'scripts', 'ensure-k8s.sh'), '--cached-only'], { encoding: 'utf8' });
  if (r.status === 0) return null;
  const said = r.stderr.trim().replace(/^ensure-k8s: /, '');
  // 4: not built; 3: no go to build with; anything else (a broken component dir) is no reason to skip
  if (r.status === 4 || r.status === 3) return said;
  throw new Error(`scripts/ensure-k8s.sh --cached-only exited ${r.status}: ${said}`);
}

export default async function k8sBench(ctx) {
  if (process.getuid?.() !== 0) throw new Error('the Kubernetes bench needs root (it runs a node: namespaces, cgroups, containerd)');
  const unbuilt = unbuiltComponent();
  if (unbuilt) return ctx.log(`skipped: ${unbuilt} (the Kubernetes tier's components: about 50 minutes cold on 2 cores)`);
  // the tier is TypeScript: compiled on load, as the tests' child processes are
  require('../test/helpers/ts-register.cjs');
  const missing = require('../test/field/packaged.ts').missingPackage();
  if (missing) return ctx.log(`skipped: ${missing} is missing (npm run package builds the installer image)`);
  const { Cluster } = require('../test/k8s/cluster.ts');
  const { nad, pod, podPath, waitGone, waitRunning } = require('../test/k8s/pods.ts');
  const { debianPlugin } = require('../test/helpers/cni-run.ts');

  const tag = randomBytes(2).toString('hex');
  const kinds = [
    { kind: 'sriovctl', type: 'sriovctl-cni', nic: `bk${tag}s`, subnet: '10.124.0.0/24', ms: [] },
    { kind: 'host-device', type: 'host-device', nic: `bk${tag}h`, subnet: '10.124.1.0/24', ms: [] },
  ];
  const c = await Cluster.start();
  try {
    await c.applyNadCrd();
    copyFileSync(debianPlugin('host-device'), join(c.containerd.binDir, 'host-device'));
    for (const k of kinds) {
      ip('link', 'add', k.nic, 'mtu', '1400', 'type', 'veth', 'peer', 'name', `${k.nic}p`);
      await c.api.create(nad({ cniVersion: '1.0.0', name: `bench-${tag}-${k.kind}`, type: k.type, device: k.nic, ipam: { type: 'host-local', ranges: [[{ subnet: k.subnet }]] } }));
    }
    let n = 0;
    // the cycle's two halves apart too: up (created → Running) and down (deleted → gone, the NIC home)
    const cycle = async (k) => {
      const name = `bench-${tag}-${k.kind}-${n++}`;
      const up = await timeMs(async () => {
        await c.api.create(pod(c, name, `bench-${tag}-${k.kind}`));
        await waitRunning(c, name);
      });
      if (existsSync(`/sys/class/net/${k.nic}`)) throw new Error(`${name} runs but ${k.nic} never left home`);
      const down = await timeMs(async () => {
        await c.api.delete(podPath(name));
        await waitGone(c, name);
        await c.api.waitFor(`${k.nic} home`, async () => (existsSync(`/sys/class/net/${k.nic}`) ? true : undefined));
      });
      return { up, down };
    };
    // one of each first, not counted: the first pod pays for what kubelet and containerd do once
    for (const k of kinds) await cycle(k);
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of rotate(kinds, r)) {
        const { up, down } = await cycle(k);
        k.ms.push(up + down);
        (k.halves ??= { up: [], down: [] }).up.push(up);
        k.halves.down.push(down);
      }
    }
  } finally {
    await c.stop().finally(() => {
      for (const k of kinds) if (existsSync(`/sys/class/net/${k.nic}`)) ip('link', 'del', k.nic);
    });
  }
  const [ours, theirs] = kinds.map((k) => k.ms);
  const ms = (v) => `${median(v).toFixed(0)} ms`;
  ctx.log(`pod create → Running → delete → gone and the NIC home, median of ${ROUNDS} alternated rounds: sriovctl-cni ${ms(ours)}, host-device ${ms(theirs)}`);
  ctx.log(`halves (median): up ${kinds.map((k) => `${k.kind} ${ms(k.halves.up)}`).join(', ')}; down ${kinds.map((k) => `${k.kind} ${ms(k.halves.down)}`).join(', ')}`);
  ctx.ratio('sriovctl/host-device:k8s-pod-cycle', median(ours) / median(theirs), { max: 1.0 }, roundRatios(ours, theirs));
}
