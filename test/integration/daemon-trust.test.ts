// Whom the daemon serves, and what it takes from them: a real `sriovctl daemon`, the real shim, stand-in NICs and
// spy IPAM plugins that record who ran them. A caller that could not do the work itself (no capabilities, another
// user namespace) is sent to the one-shot plugin, which runs with the caller's own privileges; a caller in another
// mount namespace or a chroot is served call by call, when every path of the call is the same file in its root; a
// call asking for a state dir that is not the daemon's is sent back and run one-shot; the daemon's IPAM plugins get
// none of the caller's variables but the CNI ones.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerRecords, netnsPath, SHIM, type CniRoots } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';
import { TEST_DAEMON_ENV, useDaemons } from '../helpers/daemon-process';
import type { Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dir: string;

useCniPodWorld((w) => ({ s, roots, pod, nic, dir } = w), 't0', { tempDir: 'sriovctl-daemon-trust-' });

const sock = () => join(dir, 'run', 'cni.sock');
const pluginDir = () => join(dir, 'plugins');
const marker = () => join(dir, 'spy-ran');

const daemon = useDaemons(sock);

/**
 * A spy IPAM plugin in `where`: each run appends "<verb> <uid> <CapEff> <mount namespace>" to `log`, dumps its
 * environment (NUL-separated) to `log`.env, and answers ADD with an address.
 */
function spyText(log: string): string {
  return `#!/bin/sh
[ "$CNI_COMMAND" = VERSION ] && { echo '{"cniVersion":"1.1.0","supportedVersions":["0.4.0","1.0.0","1.1.0"]}'; exit 0; }
cat >/dev/null
echo "$CNI_COMMAND $(id -u) $(awk '/^CapEff/{print $2}' /proc/$$/status) $(readlink /proc/$$/ns/mnt)" >> ${log}
env -0 > ${log}.env
[ "$CNI_COMMAND" = ADD ] && echo '{"cniVersion":"1.1.0","ips":[{"address":"10.95.0.5/24"}]}'
exit 0
`;
}

function writeSpy(where: string): void {
  mkdirSync(where, { recursive: true });
  writeFileSync(join(where, 'spy'), spyText(marker()), { mode: 0o755 });
}

/** Lines the spy wrote: [verb, uid, CapEff, mount namespace]. */
function spyRuns(): string[][] {
  return existsSync(marker()) ? readFileSync(marker(), 'utf8').trim().split('\n').map((l) => l.split(' ')) : [];
}

const spyConf = () => deviceConf(s, nic, { type: 'spy' });

function callEnv(command: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    SRIOVCTL_STATE_DIR: roots.stateDir,
    SRIOVCTL_SYSFS_ROOT: roots.sim.root,
    SRIOVCTL_SOCKET: sock(),
    CNI_COMMAND: command,
    CNI_CONTAINERID: 'c1',
    CNI_NETNS: netnsPath(pod),
    CNI_IFNAME: 'net1',
    CNI_PATH: pluginDir(),
    ...more,
  };
}

/** The shim run as `prefix` asks (setpriv, unshare, …) with `env` and the config on stdin. */
function shimAs(prefix: string[], env: Record<string, string>, config: object = spyConf()) {
  const [cmd, ...args] = [...prefix, SHIM];
  const r = spawnSync(cmd, args, { env, input: JSON.stringify(config), encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** `env` as `K='v'` words for a shell command line. */
function assignments(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}='${v.replace(/'/g, `'\\''`)}'`)
    .join(' ');
}

const CLI = join(__dirname, '..', '..', 'bin', 'sriovctl.js');

const FULL_CAPS = readFileSync('/proc/self/status', 'utf8').match(/^CapEff:\s*(\S+)$/m)![1];
const OWN_MNT_NS = readlinkSync('/proc/self/ns/mnt');

describe('a caller that could not do the work itself is sent to the one-shot plugin', () => {
  it('root with every capability dropped: its STATUS, whose IPAM plugin is its own script, never runs with the daemon\'s capabilities', async () => {
    const d = await daemon();
    writeSpy(pluginDir());
    const r = shimAs(['setpriv', '--inh-caps=-all', '--bounding-set=-all'], callEnv('STATUS'));
    const runs = spyRuns();
    expect(runs.length, r.stdout + r.stderr).toBeGreaterThan(0);
    // the one-shot plugin ran it, as the caller: uid 0, and no capability at all
    for (const [verb, uid, capEff] of runs) expect([verb, uid, capEff]).toEqual(['STATUS', '0', '0000000000000000']);
    expect(FULL_CAPS).not.toBe('0000000000000000');
    const st = await d.stats();
    expect(st.requests.total).toBe(0);
    expect(st.declined).toBe(1);
    expect(d.log()).toMatch(/lacks CAP_NET_ADMIN and CAP_SYS_ADMIN \(CapEff 0000000000000000\)/);
  });

  it('root-mapped in a user namespace of its own (every capability there, none over the host): not served', async () => {
    // the same uid (0), network and mount namespaces as the daemon: only its user namespace tells it apart, and its
    // capabilities count in that namespace alone
    const d = await daemon();
    writeSpy(pluginDir());
    const r = shimAs(['unshare', '--user', '--map-root-user'], callEnv('STATUS'));
    const runs = spyRuns();
    expect(runs.length, r.stdout + r.stderr).toBeGreaterThan(0);
    for (const [verb, uid] of runs) expect([verb, uid]).toEqual(['STATUS', '0']);
    const st = await d.stats();
    expect(st.requests.total).toBe(0);
    expect(st.declined).toBe(1);
    expect(d.log()).toMatch(/is in another user namespace than the daemon serves/);
  });

  it('a caller in a private mount namespace naming /proc/<its pid>/root/… as CNI_PATH: its plugin runs in its own namespace, never the daemon\'s', async () => {
    const d = await daemon();
    const hidden = join(dir, 'hidden');
    mkdirSync(hidden);
    const spyFile = join(dir, 'spy.sh');
    writeFileSync(spyFile, spyText(marker()), { mode: 0o755 });
    // inside: a tmpfs over `hidden` holding the spy, seen from outside only through /proc/<pid>/root
    const script = `mount -t tmpfs none ${hidden} && cp ${spyFile} ${hidden}/spy && CNI_PATH=/proc/$$/root${hidden} exec ${SHIM}`;
    const inner = spawnSync('unshare', ['-m', 'sh', '-c', script], { env: callEnv('STATUS'), input: JSON.stringify(spyConf()), encoding: 'utf8', timeout: 60_000 });
    const runs = spyRuns();
    expect(runs.length, inner.stdout + inner.stderr).toBeGreaterThan(0);
    for (const [verb, , , mntNs] of runs) {
      expect(verb).toBe('STATUS');
      expect(mntNs).not.toBe(OWN_MNT_NS);
    }
    const st = await d.stats();
    expect(st.requests.total).toBe(0);
    expect(st.declined).toBe(1);
    // its mount namespace is no privilege, but no plugin dir of the daemon's is reached through another process's root
    expect(d.log()).toMatch(/sent a call back to the one-shot plugin: its CNI_PATH names \/proc\/\d+\/root/);
  });
});

describe('the daemon\'s own configuration', () => {
  it('a call asking for another state dir is sent back and run one-shot (its record in its own state dir); the daemon\'s own is served', async () => {
    const own = join(dir, 'daemon-state');
    const d = await daemon({ SRIOVCTL_DAEMON_CALLER_ROOT: '', SRIOVCTL_STATE_DIR: own, SRIOVCTL_SYSFS_ROOT: roots.sim.root });
    const conf = deviceConf(s, nic, { type: 'static', addresses: [{ address: '10.78.0.5/24' }] });
    const add = shimAs([], callEnv('ADD', { CNI_PATH: '/usr/lib/cni' }), conf);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(JSON.parse(add.stdout).interfaces[0].name).toBe('net1');
    expect(ledgerRecords(roots.stateDir)).toHaveLength(1);
    expect(ledgerRecords(own)).toEqual([]);
    let st = await d.stats();
    expect(st.requests.total).toBe(0);
    expect(st.declined).toBe(1);
    expect(d.log()).toContain(`sent a call back to the one-shot plugin: it asks for state dir ${roots.stateDir}; the daemon's is ${own}`);
    const del = shimAs([], callEnv('DEL', { CNI_PATH: '/usr/lib/cni' }), conf);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
    // the daemon's own state dir, asked for: the daemon runs it
    const served = shimAs([], callEnv('ADD', { CNI_PATH: '/usr/lib/cni', SRIOVCTL_STATE_DIR: own }), conf);
    expect(served.status, served.stdout + served.stderr).toBe(0);
    expect(ledgerRecords(own)).toHaveLength(1);
    expect(shimAs([], callEnv('DEL', { CNI_PATH: '/usr/lib/cni', SRIOVCTL_STATE_DIR: own }), conf).status).toBe(0);
    st = await d.stats();
    expect(st.requests.byVerb).toEqual({ ADD: 1, DEL: 1 });
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('a CNI_PATH naming a dir that is not one of the daemon\'s plugin dirs is sent back', async () => {
    // the caller's state dir and sysfs root are the daemon's own: only its plugin dir is not
    const d = await daemon({ SRIOVCTL_DAEMON_CALLER_ROOT: '', SRIOVCTL_STATE_DIR: roots.stateDir, SRIOVCTL_SYSFS_ROOT: roots.sim.root });
    writeSpy(pluginDir());
    const r = shimAs([], callEnv('STATUS'));
    expect(spyRuns().map(([verb, uid, capEff]) => [verb, uid, capEff])).toEqual([['STATUS', '0', FULL_CAPS]]); // one-shot, as this (full) root
    const st = await d.stats();
    expect(st.requests.total, r.stdout + r.stderr).toBe(0);
    expect(d.log()).toContain(`its CNI_PATH names ${pluginDir()}, not one of the daemon's plugin dirs (/usr/lib/cni)`);
  });

  it('a CNI_PATH of several dirs (as Multus thin passes) whose IPAM plugin is found in the daemon\'s dir first is served; the lookup never reaches the other dir', async () => {
    const d = await daemon({ SRIOVCTL_DAEMON_CALLER_ROOT: '', SRIOVCTL_STATE_DIR: roots.stateDir, SRIOVCTL_SYSFS_ROOT: roots.sim.root });
    // a `static` of the caller's own in the other dir: run, it would leave its mark
    writeSpy(pluginDir());
    writeFileSync(join(pluginDir(), 'static'), spyText(marker()), { mode: 0o755 });
    const conf = deviceConf(s, nic, { type: 'static', addresses: [{ address: '10.78.0.6/24' }] });
    const multus = { CNI_PATH: `/usr/lib/cni:${pluginDir()}` };
    const add = shimAs([], callEnv('ADD', multus), conf);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(JSON.parse(add.stdout).ips).toEqual([{ address: '10.78.0.6/24', interface: 0 }]);
    expect(shimAs([], callEnv('DEL', multus), conf).status).toBe(0);
    expect((await d.stats()).requests.byVerb).toEqual({ ADD: 1, DEL: 1 });
    expect(spyRuns()).toEqual([]);
    expect(nicState(nic.name)).toEqual(nic);
    // the daemon's dir after the other one: the lookup would look there first, so the call is sent back
    const first = shimAs([], callEnv('STATUS', { CNI_PATH: `${pluginDir()}:/usr/lib/cni` }), conf);
    expect(first.status, first.stdout + first.stderr).toBe(0);
    expect(spyRuns().map(([verb]) => verb)).toEqual(['STATUS']); // the caller's own static, one-shot
    expect((await d.stats()).requests.total).toBe(2);
    expect(d.log()).toContain(`its CNI_PATH names ${pluginDir()}, not one of the daemon's plugin dirs (/usr/lib/cni)`);
  });

  it('the daemon\'s IPAM plugin gets the CNI variables and PATH, never the caller\'s LD_PRELOAD or anything else', async () => {
    const d = await daemon();
    writeSpy(pluginDir());
    const extra = { LD_PRELOAD: join(dir, 'no-such-preload.so'), LD_LIBRARY_PATH: dir, SRIOVCTL_TEST_SECRET: 'x' };
    const add = shimAs([], callEnv('ADD', extra));
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect((await d.stats()).requests.byVerb).toEqual({ ADD: 1 });
    const env = Object.fromEntries(
      readFileSync(`${marker()}.env`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    );
    for (const k of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'SRIOVCTL_TEST_SECRET', 'SRIOVCTL_STATE_DIR', 'SRIOVCTL_SOCKET']) expect(env).not.toHaveProperty(k);
    expect(env).toMatchObject({ CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_IFNAME: 'net1', CNI_NETNS: netnsPath(pod), CNI_PATH: pluginDir() });
    expect(env.PATH).toBeTruthy();
    expect(shimAs([], callEnv('DEL', extra)).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('a daemon in a mount namespace of its own serving the host\'s (as in the DaemonSet)', () => {
  it('a host call whose paths are the same files in both runs in the daemon; one whose state dir is another file there is sent back', async () => {
    // this test plays the host: the daemon, in a mount namespace of its own, is told nothing of it
    const covered = join(dir, 'covered-state');
    mkdirSync(covered);
    // the daemon's namespace: a copy of ours, but with a tmpfs over `covered`
    const d = await daemon({}, ['unshare', '-m', 'sh', '-c', `mount -t tmpfs none ${covered} && exec "$0" "$@"`]);
    writeSpy(pluginDir());
    const served = shimAs([], callEnv('STATUS'));
    expect(served.status, served.stdout + served.stderr).toBe(0);
    expect((await d.stats()).requests.byVerb).toEqual({ STATUS: 1 });
    const [daemonRun] = spyRuns();
    expect(daemonRun[3]).not.toBe(OWN_MNT_NS); // run by the daemon, in its namespace
    const back = shimAs([], callEnv('STATUS', { SRIOVCTL_STATE_DIR: covered }));
    expect(back.status, back.stdout + back.stderr).toBe(0);
    expect(spyRuns()[1]).toEqual(['STATUS', '0', FULL_CAPS, OWN_MNT_NS]); // one-shot, here
    const st = await d.stats();
    expect(st.requests.byVerb).toEqual({ STATUS: 1 });
    expect(d.log()).toContain(`sent a call back to the one-shot plugin: ${covered} is not the same file in the caller's root as in the daemon's`);
  });

  it('SRIOVCTL_DAEMON_MOUNT_NS=host, as a DaemonSet rendered before sets it, is still accepted: pid 1\'s callers (of a private pid namespace, playing the host\'s init) are served call by call', () => {
    // pid 1 of this machine cannot be examined from here (its /proc/1/ns/* are EACCES to every process of ours), so
    // a pid namespace of our own gives the daemon a pid 1 to serve, as hostPID gives the DaemonSet's the node's init
    const covered = join(dir, 'covered-state');
    mkdirSync(covered);
    writeSpy(pluginDir());
    const daemonEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', SRIOVCTL_SOCKET: sock(), ...TEST_DAEMON_ENV, SRIOVCTL_DAEMON_MOUNT_NS: 'host' };
    const script = `
      unshare -m sh -c 'mount -t tmpfs none ${covered} && exec "$0" "$@"' env -i ${assignments(daemonEnv)} ${process.execPath} ${CLI} daemon 2>${dir}/daemon.log &
      for i in $(seq 600); do [ -S ${sock()} ] && break; sleep 0.05; done
      echo "host $(readlink /proc/1/ns/mnt)"
      env -i ${assignments(callEnv('STATUS'))} ${SHIM} <${dir}/conf >/dev/null 2>&1; echo "served $?"
      env -i ${assignments(callEnv('STATUS', { SRIOVCTL_STATE_DIR: covered }))} ${SHIM} <${dir}/conf >/dev/null 2>&1; echo "back $?"
      kill $!; wait $!`;
    writeFileSync(join(dir, 'conf'), JSON.stringify(spyConf()));
    const out = execFileSync('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', script], { encoding: 'utf8', timeout: 90_000 });
    const said = Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ')));
    const log = readFileSync(join(dir, 'daemon.log'), 'utf8');
    expect(said.served, log).toBe('0');
    expect(said.back, log).toBe('0');
    const [inDaemon, oneShot] = spyRuns();
    expect(inDaemon[3]).not.toBe(said.host); // run by the daemon, in its own mount namespace
    expect(oneShot[3]).toBe(said.host); // sent back: one-shot, in the host's
    expect(log).toContain(`sent a call back to the one-shot plugin: ${covered} is not the same file in the caller's root as in the daemon's`);
  });
});


/**
 * The shim run as thick Multus's daemon forks a plugin: in a mount namespace of its own (private propagation: nothing
 * leaks out) chrooted into a recursive bind of this machine's /, every capability held, in our pid and network
 * namespaces. `setup` (shell, $R the chroot's dir) runs before the chroot, to put something else at a path there.
 */
function shimChrooted(env: Record<string, string>, setup = '', config: object = spyConf()) {
  const R = join(dir, 'hostroot');
  mkdirSync(R, { recursive: true });
  const script = `set -e; R=${R}; mount --rbind / "$R"; ${setup}
    exec chroot "$R" env -i ${assignments(env)} ${SHIM}`;
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { input: JSON.stringify(config), encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

describe('a caller in a mount namespace of its own, chrooted into a bind of the host\'s / (as thick Multus forks the plugin)', () => {
  it('every path of its calls the same file in its root as in the daemon\'s: the daemon serves its ADD and DEL, the NIC lent and given back', async () => {
    const d = await daemon();
    writeSpy(pluginDir());
    const add = shimChrooted(callEnv('ADD'));
    expect(add.status, add.stdout + add.stderr + d.log()).toBe(0);
    expect(JSON.parse(add.stdout).interfaces[0].name).toBe('net1');
    expect(nicState('net1', pod)?.mac).toBe(nic.mac);
    expect(ledgerRecords(roots.stateDir)).toHaveLength(1);
    // run by the daemon (its IPAM plugin in the daemon's mount namespace, ours), not one-shot in the caller's
    expect(spyRuns().map(([verb, , , mnt]) => [verb, mnt])).toEqual([['ADD', OWN_MNT_NS]]);
    const del = shimChrooted(callEnv('DEL'));
    expect(del.status, del.stdout + del.stderr + d.log()).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
    const st = await d.stats();
    expect(st.requests.byVerb).toEqual({ ADD: 1, DEL: 1 });
    expect(st.declined).toBe(0);
  });

  it.each([
    ['its state dir, a tmpfs there', () => roots.stateDir, () => `mount -t tmpfs -o mode=0755 none "$R${roots.stateDir}"`, {}],
    ['its CNI_PATH dir, another directory there holding its own spy', () => pluginDir(), () => `mount -t tmpfs -o mode=0755 none "$R${pluginDir()}"; cp ${pluginDir()}/spy "$R${pluginDir()}/spy"`, {}],
    // sysfs shows the network namespace it was mounted in: another namespace's is another device
    ['its /sys, the sysfs of another network namespace', () => '/sys', () => `unshare -n mount -t sysfs none "$R/sys"`, { SRIOVCTL_SYSFS_ROOT: '/sys' }],
  ])('%s: its call is sent back naming that path, and the one-shot plugin runs it in the caller\'s view', async (_what, path, setup, more) => {
    const d = await daemon();
    writeSpy(pluginDir());
    // the same call from the plain bind of /: served
    const served = shimChrooted(callEnv('STATUS', more));
    expect(served.status, served.stdout + served.stderr + d.log()).toBe(0);
    expect((await d.stats()).requests.byVerb).toEqual({ STATUS: 1 });
    const back = shimChrooted(callEnv('STATUS', more), setup());
    expect(back.status, back.stdout + back.stderr + d.log()).toBe(0);
    const runs = spyRuns();
    expect(runs.map(([verb]) => verb)).toEqual(['STATUS', 'STATUS']);
    expect(runs[0][3]).toBe(OWN_MNT_NS); // the daemon's
    expect(runs[1].slice(1, 3)).toEqual(['0', FULL_CAPS]);
    expect(runs[1][3]).not.toBe(OWN_MNT_NS); // one-shot, in the caller's own mount namespace
    const st = await d.stats();
    expect(st.requests.byVerb).toEqual({ STATUS: 1 });
    expect(st.declined).toBe(1);
    expect(d.log()).toContain(`sent a call back to the one-shot plugin: ${path()} is not the same file in the caller's root as in the daemon's`);
  });

  it('a caller in the daemon\'s own mount namespace but chrooted: its paths are checked in its chroot too', async () => {
    // the daemon's mount namespace (private) holds the bind of / with a tmpfs over the state dir; the caller joins it
    const R = join(dir, 'own-ns-root');
    mkdirSync(R);
    const d = await daemon({}, ['unshare', '-m', '--propagation', 'private', 'sh', '-c', `mount --rbind / ${R} && mount -t tmpfs -o mode=0755 none ${R}${roots.stateDir} && exec "$0" "$@"`]);
    writeSpy(pluginDir());
    const inDaemonNs = (chroot: boolean) => {
      const cmd = ['nsenter', '-m', '-t', String(d.child.pid), ...(chroot ? ['chroot', R] : []), 'env', '-i', ...Object.entries(callEnv('STATUS')).map(([k, v]) => `${k}=${v}`), SHIM];
      return spawnSync(cmd[0], cmd.slice(1), { input: JSON.stringify(spyConf()), encoding: 'utf8', timeout: 60_000 });
    };
    const plain = inDaemonNs(false);
    expect(plain.status, plain.stdout + plain.stderr + d.log()).toBe(0);
    const chrooted = inDaemonNs(true);
    expect(chrooted.status, chrooted.stdout + chrooted.stderr + d.log()).toBe(0);
    const st = await d.stats();
    expect(st.requests.byVerb).toEqual({ STATUS: 1 });
    expect(st.declined).toBe(1);
    expect(d.log()).toContain(`sent a call back to the one-shot plugin: ${roots.stateDir} is not the same file in the caller's root as in the daemon's`);
  });
});
