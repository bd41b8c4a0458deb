import { describe, expect, it } from 'vitest';
import { ifNameProblem, ownerOf, parseCniArgs, parseCommand, parseEnv } from '../../src/cni/env';
import { ownerKey, ownerOfKey } from '../../src/ledger/owner';
import { failure } from '../helpers/cni-failure';


const ADD_ENV = {
  CNI_COMMAND: 'ADD',
  CNI_CONTAINERID: 'abc123',
  CNI_NETNS: '/var/run/netns/pod',
  CNI_IFNAME: 'net1',
  CNI_PATH: '/opt/cni/bin:/usr/lib/cni',
};

describe('CNI_COMMAND', () => {
  it('accepts every verb of spec 1.1.0', () => {
    for (const v of ['ADD', 'DEL', 'CHECK', 'STATUS', 'GC', 'VERSION']) expect(parseCommand({ CNI_COMMAND: v })).toBe(v);
  });
  it('missing → code 4 naming it', () => {
    const e = failure(() => parseCommand({}));
    expect(e.code).toBe(4);
    expect(e.message).toContain('CNI_COMMAND');
  });
  it('unknown or wrongly cased verb → code 4', () => {
    for (const v of ['add', 'DELETE', 'UPDATE', 'ADD ']) {
      const e = failure(() => parseCommand({ CNI_COMMAND: v }));
      expect(e.code).toBe(4);
      expect(e.message).toContain('unknown CNI_COMMAND');
    }
  });
});

describe('required variables per verb', () => {
  it('ADD with all present parses', () => {
    const env = parseEnv(ADD_ENV);
    expect(env).toMatchObject({ command: 'ADD', containerId: 'abc123', netns: '/var/run/netns/pod', ifname: 'net1' });
    expect(env.path).toEqual(['/opt/cni/bin', '/usr/lib/cni']);
  });
  it('reads the IPAM bound at the front door; an unusable one is kept for the call that runs a plugin', () => {
    expect(parseEnv(ADD_ENV).ipamTimeoutMs).toBe(120_000);
    expect(parseEnv({ ...ADD_ENV, SRIOVCTL_IPAM_TIMEOUT: '5' }).ipamTimeoutMs).toBe(5000);
    // a DEL that runs no IPAM plugin is not failed by it: the error is raised where a plugin would run
    const bad = parseEnv({ ...ADD_ENV, CNI_COMMAND: 'DEL', SRIOVCTL_IPAM_TIMEOUT: '2s' }).ipamTimeoutMs;
    expect(bad).toMatchObject({ code: 4, message: expect.stringContaining('SRIOVCTL_IPAM_TIMEOUT') });
  });
  it('names every missing variable at once', () => {
    const e = failure(() => parseEnv({ CNI_COMMAND: 'ADD', CNI_PATH: '/x' }));
    expect(e.code).toBe(4);
    expect(e.message).toBe('required env variables [CNI_CONTAINERID,CNI_NETNS,CNI_IFNAME] missing');
  });
  it('an empty variable counts as missing', () => {
    const e = failure(() => parseEnv({ ...ADD_ENV, CNI_IFNAME: '' }));
    expect(e.message).toContain('[CNI_IFNAME]');
  });
  it('DEL does not need CNI_NETNS (the pod may be gone)', () => {
    const env = parseEnv({ ...ADD_ENV, CNI_COMMAND: 'DEL', CNI_NETNS: '' });
    expect(env.netns).toBeNull();
  });
  it('DEL accepts a CNI_NETNS that is not an absolute path (it is not used)', () => {
    expect(parseEnv({ ...ADD_ENV, CNI_COMMAND: 'DEL', CNI_NETNS: 'gone' }).netns).toBe('gone');
  });
  it('CHECK needs CNI_NETNS', () => {
    const e = failure(() => parseEnv({ ...ADD_ENV, CNI_COMMAND: 'CHECK', CNI_NETNS: undefined }));
    expect(e.message).toContain('[CNI_NETNS]');
  });
  it('STATUS and GC need only CNI_PATH', () => {
    expect(parseEnv({ CNI_COMMAND: 'STATUS', CNI_PATH: '/x' }).containerId).toBeNull();
    expect(parseEnv({ CNI_COMMAND: 'GC', CNI_PATH: '/x' }).ifname).toBeNull();
    expect(failure(() => parseEnv({ CNI_COMMAND: 'GC' })).message).toContain('[CNI_PATH]');
  });
  it('a relative CNI_NETNS for ADD → code 4', () => {
    const e = failure(() => parseEnv({ ...ADD_ENV, CNI_NETNS: 'pod' }));
    expect(e.code).toBe(4);
    expect(e.message).toContain('CNI_NETNS');
  });
});

describe('CNI_CONTAINERID', () => {
  it('accepts plain identifiers', () => {
    for (const id of ['a', 'abc-123_x.y', '0123456789abcdef'.repeat(4)]) {
      expect(parseEnv({ ...ADD_ENV, CNI_CONTAINERID: id }).containerId).toBe(id);
    }
  });
  it('refuses anything else with code 4', () => {
    for (const id of ['-abc', '.abc', 'a/b', '../x', 'a b', 'a;b', 'a:b', 'é']) {
      const e = failure(() => parseEnv({ ...ADD_ENV, CNI_CONTAINERID: id }));
      expect(e.code).toBe(4);
      expect(e.message).toContain('CNI_CONTAINERID');
    }
  });
});

describe('CNI_IFNAME', () => {
  it('accepts names of up to 15 bytes', () => {
    expect(ifNameProblem('eth0')).toBeNull();
    expect(ifNameProblem('a'.repeat(15))).toBeNull();
    expect(ifNameProblem('net-1_x.y')).toBeNull();
  });
  it.each([
    ['', '1..15 bytes'],
    ['a'.repeat(16), '1..15 bytes'],
    ['.', "'.' or '..'"],
    ['..', "'.' or '..'"],
    ['a/b', "'/'"],
    ['a:b', "':'"],
    ['a b', 'whitespace'],
    ['a\tb', 'whitespace'],
    ['a\nb', 'whitespace'],
  ])('%j → refused', (name, why) => {
    expect(ifNameProblem(name)).toContain(why);
  });
  it('counts bytes, not characters', () => {
    expect(ifNameProblem('é'.repeat(8))).toContain('1..15 bytes');
    expect(ifNameProblem('é'.repeat(7) + 'a')).toBeNull();
  });
  it('a bad CNI_IFNAME → code 4 naming it', () => {
    const e = failure(() => parseEnv({ ...ADD_ENV, CNI_IFNAME: 'a/b' }));
    expect(e.code).toBe(4);
    expect(e.message).toContain('CNI_IFNAME');
  });
});

describe('CNI_ARGS', () => {
  it('parses K=V;K=V with the K8S_POD_* keys', () => {
    const a = parseCniArgs('IgnoreUnknown=1;K8S_POD_NAMESPACE=ns1;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=u-1');
    expect(a.ignoreUnknown).toBe(true);
    expect(a.podNamespace).toBe('ns1');
    expect(a.podName).toBe('p');
    expect(a.pairs.K8S_POD_UID).toBe('u-1');
  });
  it('refuses "=" inside a value and an empty item, as libcni\'s LoadArgs', () => {
    expect(failure(() => parseCniArgs('K8S_POD_NAME=a=b')).message).toContain('"K8S_POD_NAME=a=b"');
    expect(failure(() => parseCniArgs('MAC=02:00:00:00:00:01;')).code).toBe(4);
  });
  it('empty is fine', () => {
    expect(parseCniArgs('').pairs).toEqual({});
  });
  it('best effort (DEL, GC, STATUS): bad items skipped, unknown keys kept, a bad IgnoreUnknown ignored', () => {
    const a = parseCniArgs('A=B=C;;junk;FOO=bar;IgnoreUnknown=yes;K8S_POD_NAME=p', false);
    expect(a.pairs).toEqual({ FOO: 'bar', IgnoreUnknown: 'yes', K8S_POD_NAME: 'p' });
    expect(a.podName).toBe('p');
  });
  it('an unknown key needs IgnoreUnknown (code 4 naming the key)', () => {
    const e = failure(() => parseCniArgs('FOO=bar'));
    expect(e.code).toBe(4);
    expect(e.message).toContain('FOO');
    expect(parseCniArgs('FOO=bar;IgnoreUnknown=true').pairs.FOO).toBe('bar');
    expect(failure(() => parseCniArgs('FOO=bar;IgnoreUnknown=0')).code).toBe(4);
  });
  it('a pair without "=" or with an empty key → code 4', () => {
    expect(failure(() => parseCniArgs('IgnoreUnknown=1;junk')).code).toBe(4);
    expect(failure(() => parseCniArgs('=x')).code).toBe(4);
  });
  it('IgnoreUnknown must be a boolean', () => {
    expect(failure(() => parseCniArgs('IgnoreUnknown=yes')).code).toBe(4);
  });
  it('a bad CNI_ARGS makes the environment of ADD and CHECK invalid, not that of DEL, GC or STATUS', () => {
    expect(failure(() => parseEnv({ ...ADD_ENV, CNI_ARGS: 'junk' })).code).toBe(4);
    expect(failure(() => parseEnv({ ...ADD_ENV, CNI_COMMAND: 'CHECK', CNI_ARGS: 'FOO=1' })).code).toBe(4);
    for (const verb of ['DEL', 'GC', 'STATUS']) {
      expect(parseEnv({ ...ADD_ENV, CNI_COMMAND: verb, CNI_ARGS: 'junk;FOO=1;A=B=C' }).args.pairs).toEqual({ FOO: '1' });
    }
  });
});

describe('owners', () => {
  it('round-trips', () => {
    expect(ownerKey(ownerOf('abc', 'net1'))).toBe('cni:abc/net1');
    expect(ownerOfKey('cni:abc/net1')).toEqual({ kind: 'pod', containerId: 'abc', ifname: 'net1' });
    expect(ownerOfKey('attach:node1')?.kind).not.toBe('pod');
  });
});
