// The resident path as a node gets it from `npm run package`: the static native shims (amd64, and arm64 under
// qemu-user) and the packaged executable's `sriovctl daemon` — a real ADD/DEL of a NIC through them; the shim
// installed beside the packaged executable running it one-shot (as sriovctl-cni) when no daemon serves; the
// systemd unit shipped beside them.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queryDaemon } from '../../src/daemon/query';
import { Scratch } from '../helpers/kernel';
import { nicState, standInNic } from '../helpers/lend-fixture';
import { executable, PKG_DIR } from './packaged';
import { startPackagedDaemon } from './packaged-daemon';
import { tempDir } from './run-packaged';

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
