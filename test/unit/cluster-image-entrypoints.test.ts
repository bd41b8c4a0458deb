// Each container of the rendered manifests calls only what its image carries: an executable the image has (its
// entry point when the container names no command), with options that executable takes. Multus and the device
// plugin are held to the record taken from their Dockerfiles at the pinned tags (src/cluster/kubernetes/component-images.ts;
// their images cannot be pulled here); the installer's arguments are parsed by the real `install-cni` command, and
// the field tier reads the installer image archive itself (test/field/image-entrypoints.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';
import { DEFAULT_IMAGES, IMAGE_ENTRY_POINTS, type ComponentImages } from '../../src/cluster/kubernetes/component-images';
import { renderManifests, type ManifestInput } from '../../src/cluster/kubernetes/manifests';

interface Call {
  component: keyof ComponentImages;
  container: string;
  /** The executable that runs and its arguments, as the runtime composes them from the image and the spec. */
  argv: string[];
}

const input: ManifestInput = { pfNames: ['enp3s0f0'], driver: 'vfio-pci', cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' }, sriovCniName: 'sriov' };

/** What each container runs: `command` replaces the entry point (and drops CMD); `args` replaces CMD. */
function calls(inp: ManifestInput): Call[] {
  const images = { ...DEFAULT_IMAGES, ...inp.images };
  const out: Call[] = [];
  for (const obj of renderManifests(inp).flatMap((f) => f.objects) as any[]) {
    if (obj.kind !== 'DaemonSet') continue;
    const pod = obj.spec.template.spec;
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      const component = (Object.keys(images) as (keyof ComponentImages)[]).find((k) => images[k] === c.image);
      if (!component) throw new Error(`container ${c.name}: image ${c.image} is none of the components'`);
      const image = IMAGE_ENTRY_POINTS[component];
      const argv = c.command ? [...c.command, ...(c.args ?? [])] : [...image.entrypoint, ...(c.args ?? image.cmd)];
      out.push({ component, container: c.name, argv });
    }
  }
  return out;
}

/** The option names in `args` (`--x=v` and `--x v` alike; values are not options). */
function optionNames(args: string[]): string[] {
  return args.filter((a) => a.startsWith('-')).map((a) => a.split('=')[0]);
}

describe('the manifests call only what the images carry', () => {
  const all = calls(input);

  it('every container runs an executable of its image, with options that executable takes', () => {
    expect(all.map((c) => `${c.component}/${c.container}`)).toEqual([
      'multus/install-multus-binary',
      'multus/kube-multus',
      'devicePlugin/kube-sriovdp',
      'cniInstaller/install-sriovctl-cni',
      'cniInstaller/sriovctl-daemon',
    ]);
    for (const c of all) {
      const image = IMAGE_ENTRY_POINTS[c.component];
      expect(image.executables, c.container).toContain(c.argv[0]);
      const known = image.options[c.argv[0]];
      expect(known, `${c.container}: no record of ${c.argv[0]}'s options`).toBeDefined();
      for (const opt of optionNames(c.argv.slice(1))) expect(known, `${c.container}: ${opt}`).toContain(opt);
    }
  });

  it('Multus: never a shell or cp (the image is distroless), its installer with a valid --type', () => {
    const multus = all.filter((c) => c.component === 'multus');
    for (const c of multus) expect(c.argv[0]).not.toMatch(/(^|\/)(sh|bash|cp)$/);
    const install = multus.find((c) => c.argv[0] === '/install_multus')!;
    expect(install.argv[install.argv.indexOf('--type') + 1]).toBe('thin');
  });

  it('the record refuses what the old manifest called: cp from the distroless Multus image', () => {
    expect(IMAGE_ENTRY_POINTS.multus.executables).not.toContain('cp');
    expect(IMAGE_ENTRY_POINTS.multus.executables.some((e) => e.endsWith('/cp') || e.endsWith('/sh'))).toBe(false);
  });

  // the command runs in this process: a state dir of its own, never the machine's
  let stateDir: string;
  const saved = process.env.SRIOVCTL_STATE_DIR;
  beforeAll(() => {
    stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-entrypoints-'));
    process.env.SRIOVCTL_STATE_DIR = stateDir;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.SRIOVCTL_STATE_DIR;
    else process.env.SRIOVCTL_STATE_DIR = saved;
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("the installer's arguments are accepted by the real install-cni command line", async () => {
    const installs = all.filter((x) => x.component === 'cniInstaller' && x.argv[1] === 'install-cni');
    expect(installs).toHaveLength(1);
    for (const c of installs) {
      // argv[0] is the executable; the rest is the `sriovctl` command line. Parsed for real: an unknown option
      // exits 2 (usage); a known command line reaches the body, which refuses to copy a non-packaged node (exit 1)
      const { code, stderr } = await run(c.argv);
      expect({ code, stderr }).toMatchObject({ code: 1, stderr: expect.stringContaining('install-cni copies the self-contained executable') });
    }
    const bad = await run(['sriovctl', 'install-cni', '--to', '/tmp', '--then-sleep']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--then-sleep'");
  });

  it("the daemon container's command and its readiness probe are the real daemon command line", async () => {
    const [daemon] = all.filter((x) => x.component === 'cniInstaller' && x.argv[1] !== 'install-cni');
    expect(daemon.argv).toEqual(['/sriovctl', 'daemon']);
    const pod = renderManifests(input).flatMap((f) => f.objects).find((o: any) => o.metadata.name === 'sriovctl-cni-installer') as any;
    const probe: string[] = pod.spec.template.spec.containers[0].readinessProbe.exec.command;
    expect(probe.slice(0, 2)).toEqual(daemon.argv);
    for (const opt of optionNames(probe.slice(1))) expect(IMAGE_ENTRY_POINTS.cniInstaller.options['/sriovctl']).toContain(opt);
    // the probe, run for real against a socket nobody serves: not ready (1), naming the socket
    const saved = process.env.SRIOVCTL_SOCKET;
    process.env.SRIOVCTL_SOCKET = join(stateDir, 'none.sock');
    try {
      const { code, stderr } = await run(probe);
      expect({ code, stderr }).toMatchObject({ code: 1, stderr: expect.stringContaining(`no daemon at ${join(stateDir, 'none.sock')}`) });
    } finally {
      if (saved === undefined) delete process.env.SRIOVCTL_SOCKET;
      else process.env.SRIOVCTL_SOCKET = saved;
    }
  });
});

async function run(argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await main(['node', ...argv], { stdout: { write: () => undefined }, stderr: { write: (s: string) => (stderr += s) } });
  return { code, stderr };
}
