import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { admitCall, daemonCallConfig, ipamTypeOf } from '../../src/daemon/caller-env';

const daemonEnv = { PATH: '/usr/bin:/bin', SRIOVCTL_DAEMON_CNI_PATH: '/opt/cni/bin:/usr/lib/cni' };
const d = daemonCallConfig(daemonEnv);
const call = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: '/var/run/netns/p', CNI_IFNAME: 'net1', CNI_ARGS: 'IgnoreUnknown=1', CNI_PATH: '/usr/lib/cni' };

describe('what the daemon takes from a caller', () => {
  it('the CNI variables, the two tunables, its own PATH and configuration; nothing else', () => {
    const a = admitCall({ ...call, SRIOVCTL_IPAM_TIMEOUT: '5', SRIOVCTL_CNI_CARRIER_WAIT_MS: '0', LD_PRELOAD: '/x.so', HOME: '/root', PATH: '/tmp', SRIOVCTL_FAILPOINT: 'lend:moved' }, d);
    expect(a).toEqual({
      admitted: true,
      env: { ...call, PATH: '/usr/bin:/bin', SRIOVCTL_IPAM_TIMEOUT: '5', SRIOVCTL_CNI_CARRIER_WAIT_MS: '0', SRIOVCTL_STATE_DIR: '/var/lib/sriovctl', SRIOVCTL_SYSFS_ROOT: '/sys' },
    });
  });

  it('its own values, spelled out, are admitted; another state dir, sysfs root, log dirs or plugin dir is sent back naming it', () => {
    expect(admitCall({ ...call, SRIOVCTL_STATE_DIR: '/var/lib/sriovctl/', SRIOVCTL_SYSFS_ROOT: '/sys', SRIOVCTL_CNI_LOG_DIRS: '/var/log', CNI_PATH: '/opt/cni/bin:rel' }, d).admitted).toBe(true);
    const reason = (extra: Record<string, string>) => {
      const a = admitCall({ ...call, ...extra }, d);
      return a.admitted ? null : a.reason;
    };
    expect(reason({ SRIOVCTL_STATE_DIR: '/x' })).toBe('it asks for state dir /x; the daemon\'s is /var/lib/sriovctl');
    expect(reason({ SRIOVCTL_STATE_DIR: 'var/lib/sriovctl' })).toBe('its SRIOVCTL_STATE_DIR "var/lib/sriovctl" is relative');
    expect(reason({ SRIOVCTL_SYSFS_ROOT: '/tmp/sys' })).toBe('it asks for sysfs root /tmp/sys; the daemon\'s is /sys');
    expect(reason({ SRIOVCTL_CNI_LOG_DIRS: '/tmp' })).toBe('it asks for log dirs /tmp; the daemon\'s are /var/log');
    expect(reason({ SRIOVCTL_CNI_LOG_DIRS: 'relative' })).toBe('it asks for log dirs (none); the daemon\'s are /var/log');
    expect(reason({ CNI_PATH: '/usr/lib/cni:/proc/1234/root/bin' })).toBe('its CNI_PATH names /proc/1234/root/bin, not one of the daemon\'s plugin dirs (/opt/cni/bin:/usr/lib/cni)');
  });

  it('VERSION is answered whatever else the caller set (it reads nothing else and acts nowhere)', () => {
    expect(admitCall({ CNI_COMMAND: 'VERSION', SRIOVCTL_STATE_DIR: '/x', CNI_PATH: '/y' }, d)).toEqual({ admitted: true, env: { CNI_COMMAND: 'VERSION' } });
  });

  it('a call sent back still carries the daemon\'s own configuration, for a call that must run anyway (its stdin spent)', () => {
    const a = admitCall({ ...call, SRIOVCTL_STATE_DIR: '/x', LD_PRELOAD: '/x.so' }, d);
    expect(a.admitted).toBe(false);
    expect(a.env).toEqual({ ...call, PATH: '/usr/bin:/bin', CNI_PATH: '/opt/cni/bin:/usr/lib/cni', SRIOVCTL_STATE_DIR: '/var/lib/sriovctl', SRIOVCTL_SYSFS_ROOT: '/sys', SRIOVCTL_CNI_LOG_DIRS: '/var/log' });
  });

  it('the daemon\'s own settings are checked at start', () => {
    expect(() => daemonCallConfig({ SRIOVCTL_DAEMON_CNI_PATH: 'bin' })).toThrow('SRIOVCTL_DAEMON_CNI_PATH: "bin" is not an absolute directory');
    expect(() => daemonCallConfig({ SRIOVCTL_DAEMON_MOUNT_NS: 'pid1' })).toThrow('want own, host or pid:<n>');
    // obsolete (every caller's view is served call by call), still accepted: a DaemonSet rendered before sets it
    for (const v of ['own', 'host', 'pid:7']) expect(() => daemonCallConfig({ SRIOVCTL_DAEMON_MOUNT_NS: v })).not.toThrow();
    expect(daemonCallConfig({}).cniPath).toEqual(['/opt/cni/bin']);
  });
});

describe('a CNI_PATH of several dirs (Multus thin passes its own list)', () => {
  // the daemon's plugin dirs: `own` holds host-local, `own2` holds static; `foreign` is not the daemon's
  const root = mkdtempSync(join(tmpdir(), 'sriovctl-cni-path-'));
  const [own, own2, foreign] = ['own', 'own2', 'foreign'].map((n) => join(root, n));
  for (const [dir, plugin] of [[own, 'host-local'], [own2, 'static'], [foreign, 'static']]) {
    mkdirSync(dir);
    writeFileSync(join(dir, plugin), '#!/bin/sh\n');
    chmodSync(join(dir, plugin), 0o755);
  }
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const daemon = daemonCallConfig({ SRIOVCTL_DAEMON_CNI_PATH: `${own}:${own2}` });
  const admit = (cniPath: string, ipam: string | null) => admitCall({ ...call, CNI_PATH: cniPath }, daemon, ipam);

  it('served when the IPAM plugin is found in a dir of the daemon\'s before any other dir: the dirs past it are dropped', () => {
    expect(admit(`${own}:${foreign}`, 'host-local')).toMatchObject({ admitted: true, env: { CNI_PATH: own } });
    expect(admit(`${own}:${own2}:${foreign}`, 'static')).toMatchObject({ admitted: true, env: { CNI_PATH: `${own}:${own2}` } });
    expect(admit(`${own}:${own2}`, 'static')).toMatchObject({ admitted: true, env: { CNI_PATH: `${own}:${own2}` } });
  });

  it('sent back when the lookup would reach another dir: before the plugin, or with the plugin in none of the daemon\'s', () => {
    const why = `its CNI_PATH names ${foreign}, not one of the daemon's plugin dirs (${own}:${own2})`;
    expect(admit(`${foreign}:${own}`, 'host-local')).toMatchObject({ admitted: false, reason: why });
    expect(admit(`${own}:${foreign}:${own2}`, 'static')).toMatchObject({ admitted: false, reason: why });
    expect(admit(`${own}:${foreign}`, 'dhcp')).toMatchObject({ admitted: false, reason: why });
    // no IPAM plugin named (or a name no lookup takes): every dir counts
    expect(admit(`${own}:${foreign}`, null)).toMatchObject({ admitted: false, reason: why });
    expect(admit(`${own}:${foreign}`, '../static')).toMatchObject({ admitted: false, reason: why });
  });

  it('the IPAM plugin a config names', () => {
    expect(ipamTypeOf(JSON.stringify({ type: 'sriovctl-cni', ipam: { type: 'static' } }))).toBe('static');
    expect(ipamTypeOf(JSON.stringify({ type: 'sriovctl-cni' }))).toBeNull();
    expect(ipamTypeOf(JSON.stringify({ ipam: { type: 7 } }))).toBeNull();
    expect(ipamTypeOf('null')).toBeNull();
    expect(ipamTypeOf('{')).toBeNull();
  });
});
