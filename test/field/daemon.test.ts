// The resident path as a node gets it from `npm run package`: the static native shims (amd64, and arm64 under
// qemu-user) and the packaged executable's `sriovctl daemon` — a real ADD/DEL of a NIC through them; the shim
// installed beside the packaged executable running it one-shot (as sriovctl-cni) when no daemon serves; the
// systemd unit shipped beside them; a search of the machine for a namespace run off the packaged daemon's thread.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queryDaemon } from '../../src/daemon/query';
import { collectOutput, type ProcessOutput } from '../helpers/collect-output';
import { ip, Scratch } from '../helpers/kernel';
import { nicState, standInNic } from '../helpers/lend-fixture';
import { executable, PKG_DIR } from './packaged';
import { startPackagedDaemon } from './packaged-daemon';
import { tempDir } from './run-packaged';
import { sameFile, until, within } from '../helpers/hang-guards';

const shimOf = (arch: 'amd64' | 'arm64') => join(PKG_DIR, `sriovctl-cni-shim-linux-${arch}`);

/** ELF program headers of a 64-bit little-endian file: does it name an interpreter (PT_INTERP, a dynamic loader)? */
function hasInterpreter(file: string): boolean {
  const b = readFileSync(file);
  if (b.toString('latin1', 1, 4) !== 'ELF' || b[4] !== 2 || b[5] !== 1) throw new Error(`${file}: not a 64-bit little-endian ELF`);
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) return true;
  return false;
}

/** qemu-user from the test's PATH (the programs under test run with none). */
function qemu(): string {
  const found = (process.env.PATH ?? '').split(':').map((d) => join(d, 'qemu-aarch64-static')).find((p) => existsSync(p));
  if (!found) throw new Error('qemu-aarch64-static is not on PATH (scripts/ensure-package-deps.sh installs it)');
  return found;
}

let tmp: ReturnType<typeof tempDir>;
let s: Scratch;
let env: Record<string, string>;
let socket: string;
beforeEach(() => {
  tmp = tempDir('daemon');
  s = new Scratch();
  mkdirSync(join(tmp.dir, 'sys', 'bus', 'pci', 'devices'), { recursive: true });
  socket = join(tmp.dir, 'run', 'cni.sock');
  env = {
    PATH: '/nonexistent',
    SRIOVCTL_SOCKET: socket,
    SRIOVCTL_CACHE_DIR: join(tmp.dir, 'cache'),
    SRIOVCTL_STATE_DIR: join(tmp.dir, 'state'),
    SRIOVCTL_SYSFS_ROOT: join(tmp.dir, 'sys'),
  };
});
afterEach(() => {
  s.cleanup();
  tmp.remove();
});

/** The packaged executable serving `socket`; stopped (SIGTERM, it must drain and exit 0) by the returned function. */
async function packagedDaemon(): Promise<() => Promise<number | null>> {
  const d = await startPackagedDaemon(executable('amd64'), { ...env, SRIOVCTL_SOCKET: socket, SRIOVCTL_DAEMON_CNI_PATH: '/usr/lib/cni' });
  return () => d.stop();
}

function cni(argv: string[], command: string, config: object, extra: Record<string, string> = {}) {
  return spawnSync(argv[0], argv.slice(1), {
    env: { ...env, ...extra, CNI_COMMAND: command, CNI_CONTAINERID: 'field-1', CNI_NETNS: `/var/run/netns/${extra.pod ?? ''}`, CNI_IFNAME: 'net1', CNI_PATH: '/usr/lib/cni' },
    input: JSON.stringify(config),
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('the packaged shims', () => {
  it.each(['amd64', 'arm64'] as const)('%s: static, no dynamic loader needed', (arch) => {
    expect(hasInterpreter(shimOf(arch))).toBe(false);
    expect(hasInterpreter(executable(arch))).toBe(true); // the executable, by contrast, needs glibc's loader
  });

  it('hand a real ADD/DEL to the packaged executable\'s daemon (arm64 under qemu-user: VERSION)', async () => {
    const stop = await packagedDaemon();
    try {
      const pod = s.netns('pod');
      const nic = standInNic(s, 'f0');
      const config = { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name };
      const add = cni([shimOf('amd64')], 'ADD', config, { pod });
      expect(add.status, add.stdout + add.stderr).toBe(0);
      expect(nicState('net1', pod)?.mac).toBe(nic.mac);
      const arm = cni([qemu(), shimOf('arm64')], 'VERSION', {});
      expect(arm.status, arm.stdout + arm.stderr).toBe(0);
      expect(JSON.parse(arm.stdout).supportedVersions).toContain('1.1.0');
      const del = cni([shimOf('amd64')], 'DEL', config, { pod });
      expect(del.status, del.stdout + del.stderr).toBe(0);
      expect(nicState(nic.name)).toEqual(nic);
      const st = await queryDaemon(socket);
      expect(st.serving && st.stats.requests.byVerb).toEqual({ ADD: 1, VERSION: 1, DEL: 1 });
    } finally {
      expect(await stop()).toBe(0);
    }
  });

  it('without a daemon, run the packaged executable beside them as sriovctl-cni', () => {
    const bin = join(tmp.dir, 'bin');
    mkdirSync(bin);
    copyFileSync(shimOf('amd64'), join(bin, 'sriovctl-cni'));
    copyFileSync(executable('amd64'), join(bin, 'sriovctl'));
    spawnSync('chmod', ['0755', join(bin, 'sriovctl-cni'), join(bin, 'sriovctl')]);
    const pod = s.netns('pod');
    const nic = standInNic(s, 'f1');
    const config = { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name };
    expect(cni([join(bin, 'sriovctl-cni'), '--print-fallback'], 'VERSION', {}).stdout).toBe(`${join(bin, 'sriovctl')}\n`);
    const add = cni([join(bin, 'sriovctl-cni')], 'ADD', config, { pod });
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(cni([join(bin, 'sriovctl-cni')], 'DEL', config, { pod }).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('ship with the daemon\'s systemd unit', () => {
    const unit = readFileSync(join(PKG_DIR, 'sriovctl-daemon.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\/usr\/local\/bin\/sriovctl daemon$/m);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
    // longer than the shim waits for a reply (600 s), so SIGTERM's drain is never cut short by SIGKILL
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1])).toBeGreaterThan(600);
  });
});

/** A CNI call through the amd64 shim, as a runtime makes it: the answer once the shim exits. */
function shimCall(command: string, id: string, netns: string, config: object): Promise<ProcessOutput> {
  const child = spawn(shimOf('amd64'), [], {
    env: { ...env, CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: netns, CNI_IFNAME: 'net1', CNI_PATH: '/usr/lib/cni' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', () => {});
  child.stdin.end(JSON.stringify(config));
  return collectOutput(child, 120_000);
}




// The packaged executable is one embedded bundle with no file beside it: its daemon must start the search worker
// from the worker's own embedded bundle, or every search runs on its one thread and holds up every other call (the
// host tier's daemon runs from a checkout, where the worker's script is a file, so only this tier sees it).
describe("the packaged daemon's search of the machine for a namespace", () => {
  let keeper: ChildProcess | null = null;
  afterEach(async () => {
    // before the scratch's cleanup: the pod's namespace (and the NIC, if a failure left it there) dies with it
    const k = keeper;
    keeper = null;
    if (k && k.exitCode === null && k.signalCode === null) {
      const gone = new Promise((r) => k.once('exit', r));
      k.kill('SIGKILL');
      await gone;
    }
  });

  // Modelled on the host tier's (test/integration/daemon-concurrency.test.ts): the pod's namespace lives on, held by
  // a process, its name gone, so a look at it searches the machine; the pause point (the daemon's own environment)
  // holds whichever thread runs that search.
  it("runs off its thread: ADD's 'abandoned?' look and CHECK's hold up no other caller's VERSION", async () => {
    const pauseDir = join(tmp.dir, 'pause');
    mkdirSync(pauseDir);
    const reached = join(pauseDir, 'reached');
    const release = join(pauseDir, 'release');
    const d = await startPackagedDaemon(executable('amd64'), {
      ...env,
      SRIOVCTL_SOCKET: socket,
      SRIOVCTL_DAEMON_CNI_PATH: '/usr/lib/cni',
      SRIOVCTL_PAUSE: 'namespace-search',
      SRIOVCTL_PAUSE_DIR: pauseDir,
      // no sweep: its look at the record would be a search of its own, reaching the pause point out of turn
      SRIOVCTL_DAEMON_SWEEP_S: '0',
    });
    try {
      const pod = s.netns('pod');
      const nic = standInNic(s, 's0');
      const config = { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name };
      const add = await within('the first ADD', shimCall('ADD', 'c1', `/var/run/netns/${pod}`, config));
      expect(add.code, add.stdout + add.stderr).toBe(0);
      expect(existsSync(reached)).toBe(false); // an ADD of a free NIC searches nothing
      keeper = spawn('ip', ['netns', 'exec', pod, 'sleep', '600'], { stdio: 'ignore' });
      const podNetns = `/proc/${keeper.pid}/ns/net`;
      await until('the keeper in the pod', () => sameFile(podNetns, `/var/run/netns/${pod}`));
      ip('netns', 'del', pod);

      /** While `call` is held in its search, the daemon answers a VERSION itself; released, the call finishes. */
      let versions = 0;
      const heldMeanwhile = async (call: Promise<ProcessOutput>) => {
        let done = false;
        void call.then(() => (done = true));
        await until('the search reached', () => existsSync(reached));
        // a daemon whose thread is held greets no one: after its greeting bound the shim would try its one-shot
        // fallback (there is none beside dist/pkg's shim: error 109), and the daemon would not count the VERSION
        const version = await within('VERSION while a search is held', shimCall('VERSION', 'c3', `/var/run/netns/${pod}`, {}));
        expect(version.code, version.stdout + version.stderr + d.log()).toBe(0);
        expect(JSON.parse(version.stdout).supportedVersions).toContain('1.1.0');
        expect((await d.stats()).requests.byVerb.VERSION).toBe(++versions);
        expect(done).toBe(false);
        writeFileSync(release, '');
        const answer = await within('the held call', call);
        rmSync(reached);
        rmSync(release);
        return answer;
      };

      // another pod's ADD of the NIC: lent to c1, whose namespace lives on (found by the search): refused, not taken
      const pod2 = s.netns('pod2');
      const refused = await heldMeanwhile(shimCall('ADD', 'c2', `/var/run/netns/${pod2}`, config));
      expect(refused.code, refused.stdout + refused.stderr).not.toBe(0);
      const refusal = JSON.parse(refused.stdout) as { msg: string };
      expect(refusal.msg).toContain('c1');
      expect(refusal.msg).not.toContain('its namespace is gone');

      // c1's CHECK names its namespace as the runtime holds it now
      const checked = await heldMeanwhile(shimCall('CHECK', 'c1', podNetns, { ...config, prevResult: JSON.parse(add.stdout) }));
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);

      writeFileSync(release, ''); // from here on, no search is held
      const del = await within('the DEL', shimCall('DEL', 'c1', podNetns, config));
      expect(del.code, del.stdout + del.stderr).toBe(0);
      expect(nicState(nic.name)).toEqual(nic);
      // every call was the daemon's own
      expect((await d.stats()).requests.byVerb).toEqual({ ADD: 2, CHECK: 1, VERSION: 2, DEL: 1 });
    } finally {
      writeFileSync(release, ''); // a held search (a failure midway) must not hold the daemon's drain
      expect(await d.stop()).toBe(0);
    }
  });
});
