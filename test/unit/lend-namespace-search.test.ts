// Finding a namespace by identity through /proc and through bind mounts in other mount namespaces, on a tree of
// /proc's shape: files stand for namespace files (their dev+inode is the identity), hard links for two processes
// sharing a namespace, directories for container roots.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linkSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { foreignMountPaths, namespacePaths, pathInRoot, type SearchRoots } from '../../src/lend/namespace-search';
import { findNamespacePath } from '../../src/lend/namespaces';
import type { NamespaceRef } from '../../src/net/types';

let dir: string;
let roots: SearchRoots;

function file(p: string): string {
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, '');
  return p;
}

function link(existing: string, p: string): void {
  mkdirSync(dirname(p), { recursive: true });
  linkSync(existing, p);
}

function refTo(p: string, path: string | null): NamespaceRef {
  const st = statSync(p);
  return { id: { dev: st.dev, ino: st.ino }, path, pid: null, initial: false };
}

const proc = (...parts: string[]) => join(roots.proc, ...parts);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-nssearch-'));
  roots = { proc: join(dir, 'proc'), named: join(dir, 'netns') };
  mkdirSync(roots.named, { recursive: true });
  // us: pid 100, our mount namespace is /proc/self's
  const ourMnt = file(proc('100', 'ns', 'mnt'));
  file(proc('100', 'ns', 'net'));
  link(ourMnt, proc('self', 'ns', 'mnt'));
  // a node container: pids 200 and 201 share its mount namespace; its /var/run is an absolute link to /run, and a
  // pod namespace is pinned only by a bind mount there
  const nodeMnt = file(proc('200', 'ns', 'mnt'));
  link(nodeMnt, proc('201', 'ns', 'mnt'));
  file(proc('200', 'ns', 'net'));
  mkdirSync(proc('200', 'root', 'var'), { recursive: true });
  symlinkSync('/run', proc('200', 'root', 'var', 'run'));
  file(proc('200', 'root', 'run', 'netns', 'cni-pod1'));
  // another container with a real /var/run directory
  file(proc('300', 'ns', 'mnt'));
  file(proc('300', 'root', 'var', 'run', 'netns', 'x'));
  // a process gone between readdir and stat: no ns/mnt
  mkdirSync(proc('400'));
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('pathInRoot', () => {
  it('resolves an absolute symlink inside the root, not in ours', () => {
    expect(pathInRoot(proc('200', 'root'), '/var/run/netns/cni-pod1')).toBe(proc('200', 'root', 'run', 'netns', 'cni-pod1'));
  });

  it('never climbs above the root with ..', () => {
    mkdirSync(proc('300', 'root', 'etc'));
    expect(pathInRoot(proc('300', 'root'), '/var/../../../../etc')).toBe(proc('300', 'root', 'etc'));
  });

  it('is null for a missing component and for a symlink loop', () => {
    expect(pathInRoot(proc('300', 'root'), '/run/netns/x')).toBeNull();
    symlinkSync('/loop', proc('300', 'root', 'loop'));
    expect(pathInRoot(proc('300', 'root'), '/loop/netns')).toBeNull();
  });
});

describe('foreignMountPaths', () => {
  it('lists bind mounts of every other mount namespace once, never ours', () => {
    file(proc('100', 'root', 'run', 'netns', 'ours'));
    expect([...foreignMountPaths(roots)].sort()).toEqual([proc('200', 'root', 'run', 'netns', 'cni-pod1'), proc('300', 'root', 'var', 'run', 'netns', 'x')]);
  });

  it('tries the path a record holds inside each of them before its named namespaces', () => {
    file(proc('300', 'root', 'srv', 'pinned'));
    const paths = [...foreignMountPaths(roots, '/srv/pinned')];
    expect(paths).toContain(proc('300', 'root', 'srv', 'pinned'));
    expect(paths.indexOf(proc('300', 'root', 'srv', 'pinned'))).toBeLessThan(paths.indexOf(proc('300', 'root', 'var', 'run', 'netns', 'x')));
  });
});

describe('findNamespacePath by identity', () => {
  it('finds a pod namespace pinned only inside a node container, by the path the node recorded', () => {
    const pod = proc('200', 'root', 'run', 'netns', 'cni-pod1');
    expect(findNamespacePath(refTo(pod, '/var/run/netns/cni-pod1'), roots)).toBe(pod);
  });

  it('finds it with a path that means nothing here, by scanning', () => {
    const pod = proc('200', 'root', 'run', 'netns', 'cni-pod1');
    expect(findNamespacePath(refTo(pod, '/somewhere/else'), roots)).toBe(pod);
  });

  it('finds a node namespace through its processes, whatever pid the node recorded', () => {
    const node = proc('200', 'ns', 'net');
    expect(findNamespacePath({ ...refTo(node, '/proc/1/ns/net'), pid: 1 }, roots)).toBe(node);
  });

  it('prefers our named namespaces, then processes, then other mount namespaces', () => {
    const named = file(join(roots.named, 'n1'));
    const paths = [...namespacePaths(roots)];
    expect(paths[0]).toBe(named);
    expect(paths.indexOf(proc('200', 'ns', 'net'))).toBeLessThan(paths.indexOf(proc('200', 'root', 'run', 'netns', 'cni-pod1')));
  });

  it('is null once the namespace is gone (a file with another identity in its place)', () => {
    const pod = proc('200', 'root', 'run', 'netns', 'cni-pod1');
    const ref = refTo(pod, '/var/run/netns/cni-pod1');
    // made while the old one exists, so it cannot get its inode
    const other = file(join(dir, 'other'));
    rmSync(pod);
    renameSync(other, pod);
    expect(findNamespacePath(ref, roots)).toBeNull();
  });
});
