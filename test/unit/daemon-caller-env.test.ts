import { describe, expect, it } from 'vitest';
import { admitCall, daemonCallConfig } from '../../src/daemon/caller-env';

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
    expect(daemonCallConfig({ SRIOVCTL_DAEMON_MOUNT_NS: 'host' }).hostMountsOf).toBe(1);
    expect(daemonCallConfig({}).cniPath).toEqual(['/opt/cni/bin']);
  });
});
