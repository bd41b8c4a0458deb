// The installer image archive `npm run package` built, read as a runtime reads it: every platform's config has the
// entry point the manifests rely on (src/cluster/kubernetes/component-images.ts), its layers carry the executables the
// manifests call, and the DaemonSet's containers work in a real container: `--also-as sriov` links the plugin (the
// shim) under sriov-cni's name too, and a runtime calling that name gets the CNI plugin; the main container serves
// `sriovctl daemon` on the socket dir it shares with the node, which the node's shim reaches.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_ENTRY_POINTS } from '../../src/cluster/kubernetes/component-images';
import { cniInstallerObjects } from '../../src/cluster/kubernetes/manifests';
import { queryDaemon } from '../../src/daemon/query';
import { INSTALL_LOCK_FILE } from '../../src/install/install-lock';
import { installerImage } from '../../src/install/installer-image';
import { startContainerd, which, type Containerd } from './containerd';
import { IMAGE_ARCHIVE } from './packaged';
import { runPackaged } from './run-packaged';

interface Descriptor {
  mediaType: string;
  digest: string;
  platform?: { architecture: string; os: string };
}

function blob(digest: string): Buffer {
  return execFileSync('tar', ['-xOf', IMAGE_ARCHIVE, `blobs/sha256/${digest.replace(/^sha256:/, '')}`], { maxBuffer: 512 << 20 });
}

/** Every platform image of the archive (following nested indexes). */
function platformManifests(list: Descriptor[] = JSON.parse(execFileSync('tar', ['-xOf', IMAGE_ARCHIVE, 'index.json'], { encoding: 'utf8' })).manifests): Descriptor[] {
  return list.flatMap((d) => (d.mediaType.endsWith('image.index.v1+json') ? platformManifests(JSON.parse(blob(d.digest).toString()).manifests) : [d]));
}

/** Paths in a layer blob, absolute ('/sriovctl'). */
function layerFiles(layer: { mediaType: string; digest: string }): string[] {
  const gz = layer.mediaType.endsWith('+gzip');
  const out = execFileSync('tar', [gz ? '-tzf' : '-tf', '-'], { input: blob(layer.digest), encoding: 'utf8', maxBuffer: 64 << 20 });
  return out.split('\n').filter(Boolean).map((p) => `/${p.replace(/^\.?\//, '')}`);
}

describe('the installer image carries what the manifests call', () => {
  const record = IMAGE_ENTRY_POINTS.cniInstaller;

  it('amd64 and arm64: the entry point of the record, and every executable the record names', () => {
    const images = platformManifests();
    expect(images.map((d) => d.platform?.architecture).sort()).toEqual(['amd64', 'arm64']);
    for (const d of images) {
      const manifest = JSON.parse(blob(d.digest).toString());
      const config = JSON.parse(blob(manifest.config.digest).toString()).config;
      expect(config.Entrypoint).toEqual(record.entrypoint);
      expect(config.Cmd ?? []).toEqual(record.cmd);
      const files = manifest.layers.flatMap(layerFiles);
      for (const exe of record.executables) expect(files, d.platform?.architecture).toContain(exe);
    }
  });

  describe('in a container, as the DaemonSet runs it', () => {
    let c: Containerd;
    const NS = 'sriovctl-entrypoints';
    beforeAll(async () => {
      c = await startContainerd();
      c.ctrIn(NS, 'images', 'import', '--all-platforms', IMAGE_ARCHIVE);
    });
    afterAll(async () => {
      await c?.teardown();
    });

    it("the init container's arguments (--also-as sriov) install sriovctl-cni and sriov, and sriov answers as the plugin", async () => {
      const [ds] = cniInstallerObjects({ pfNames: ['x'], driver: null, cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' }, sriovCniName: 'sriov' }) as any[];
      const init = ds.spec.template.spec.initContainers[0];
      expect(init.image).toBe(installerImage());
      const bin = join(c.dir, 'host-cni-bin');
      mkdirSync(bin);
      chmodSync(bin, 0o755);
      // the kubelet runs the image's ENTRYPOINT (read from the archive) with the container's `args` for its CMD;
      // ctr run's trailing arguments replace both, so the composition is spelt out here
      const amd64 = platformManifests().find((d) => d.platform?.architecture === 'amd64')!;
      const entrypoint: string[] = JSON.parse(blob(JSON.parse(blob(amd64.digest).toString()).config.digest).toString()).config.Entrypoint;
      const id = `sriovctl-also-as-${process.pid}`;
      const out = c.ctrIn(NS, 'run', '--rm', '--runc-root', c.runcRoot, '--cgroup', `${c.cgroupParent}/${id}`, '--net-host',
        '--mount', `type=bind,src=${bin},dst=/host/opt/cni/bin,options=rbind:rw`, init.image, id, ...entrypoint, ...init.args);
      expect(out).toBe('installed /host/opt/cni/bin/sriovctl-cni\ninstalled /host/opt/cni/bin/sriov\n');
      expect(readdirSync(bin).filter((f) => !f.startsWith('sriovctl.d')).sort()).toEqual([INSTALL_LOCK_FILE, 'sriov', 'sriovctl-cni']);
      expect(statSync(join(bin, 'sriov')).ino).toBe(statSync(join(bin, 'sriovctl-cni')).ino);

      const env = { SRIOVCTL_CACHE_DIR: join(c.dir, 'cache'), SRIOVCTL_STATE_DIR: join(c.dir, 'state') };
      const version = await runPackaged([], { name: 'sriov', file: join(bin, 'sriov'), env: { ...env, CNI_COMMAND: 'VERSION' } });
      expect(version.code).toBe(0);
      expect(JSON.parse(version.stdout).supportedVersions).toContain('1.1.0');
    });

    it("the main container's command serves `sriovctl daemon` on the socket dir it shares with the node: the probe says Ready, the node's shim is served, SIGTERM exits 0", async () => {
      const [ds] = cniInstallerObjects({ pfNames: ['x'], driver: null, cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' } }) as any[];
      const pod = ds.spec.template.spec;
      const main = pod.containers[0];
      expect(main.securityContext).toEqual({ privileged: true });
      // hostPID: the daemon serves only callers of its own netns, which it reads in /proc/<caller's pid>: with a
      // pid namespace of its own the node's callers have no pid there, and every call is declined to the one-shot
      expect([pod.hostNetwork, pod.hostPID]).toEqual([true, true]);
      const socketDir = pod.volumes.find((v: any) => v.name === main.volumeMounts.find((m: any) => m.mountPath === '/run/sriovctl').name).hostPath.path;
      expect(socketDir).toBe('/run/sriovctl');
      // the node's socket dir, here a dir of the test's (root's, 0700) mounted where the DaemonSet mounts it
      const hostRun = join(c.dir, 'host-run-sriovctl');
      mkdirSync(hostRun, { mode: 0o700 });
      const socket = join(hostRun, 'cni.sock');
      const id = `sriovctl-daemon-${process.pid}`;
      // the container's daemon serves callers in the host's mount namespace (here this test's) call by call
      const envArgs = (main.env as { name: string; value: string }[]).flatMap((e) => ['--env', `${e.name}=${e.value}`]);
      // attached: ctr run exits with the container's status
      const run = spawn(which('ctr'), ['--address', c.socket, '--namespace', NS, 'run', '--rm', '--runc-root', c.runcRoot, '--cgroup', `${c.cgroupParent}/${id}`,
        '--net-host', '--with-ns', `pid:/proc/${process.pid}/ns/pid`, '--privileged', '--mount', `type=bind,src=${hostRun},dst=${socketDir},options=rbind:rw`, ...envArgs, main.image, id, ...main.command]);
      let log = '';
      run.stderr.on('data', (b: Buffer) => (log += b.toString()));
      const exited = new Promise<number | null>((r) => run.on('exit', (code) => r(code)));
      try {
        for (let i = 0; !(await queryDaemon(socket, 1000)).serving; i++) {
          if (i > 1200 || run.exitCode !== null) throw new Error(`the container's daemon did not serve ${socket}: ${log}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        // the readiness probe, run in the container as the kubelet runs it: exit 0 once the socket answers
        expect(c.ctrIn(NS, 'tasks', 'exec', '--exec-id', `probe-${process.pid}`, id, ...main.readinessProbe.exec.command)).toMatch(/^daemon: pid \d+ serves \/run\/sriovctl\/cni\.sock\n$/);
        // a CNI call from the node, through the installed shim on the node's socket, is served by the container
        const bin = join(c.dir, 'host-cni-bin');
        const env = { SRIOVCTL_CACHE_DIR: join(c.dir, 'cache'), SRIOVCTL_STATE_DIR: join(c.dir, 'state'), SRIOVCTL_SOCKET: socket };
        const version = await runPackaged([], { name: 'sriovctl-cni', file: join(bin, 'sriovctl-cni'), env: { ...env, CNI_COMMAND: 'VERSION' } });
        expect([version.code, version.stderr]).toEqual([0, '']);
        const stats = await queryDaemon(socket, 5000);
        expect(stats.serving && stats.stats.requests.byVerb.VERSION).toBe(1);
      } finally {
        if (run.exitCode === null) c.ctrIn(NS, 'tasks', 'kill', '--signal', 'SIGTERM', id);
      }
      expect(await exited).toBe(0);
    });
  });
});
