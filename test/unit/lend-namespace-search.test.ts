// Finding a namespace by identity through /proc and through bind mounts in other mount namespaces, on a tree of
// /proc's shape: files stand for namespace files (their dev+inode is the identity), hard links for two processes
// sharing a namespace, directories for container roots.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { linkSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { foreignMountCandidates, namespaceCandidates, pathInRoot, SearchBudget, type SearchBounds, type SearchRoots } from '../../src/lend/namespace-search';
import { findNamespace } from '../../src/lend/namespaces';
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

const LOOSE: SearchBounds = { entriesPerDir: 1e6, entriesPerCall: 1e6, msPerDir: 1e9, msPerCall: 1e9, oversizedRereadMs: 0 };
const budget = (bounds: Partial<SearchBounds> = {}) => new SearchBudget({ ...LOOSE, ...bounds });
const hostPaths = (it: Iterable<{ hostPath: string }>) => [...it].map((c) => c.hostPath);
const findNamespacePath = (ref: NamespaceRef, r: SearchRoots, b = budget()) => findNamespace(ref, b, r)?.hostPath ?? null;

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
    expect(hostPaths(foreignMountCandidates(budget(), roots)).sort()).toEqual([proc('200', 'root', 'run', 'netns', 'cni-pod1'), proc('300', 'root', 'var', 'run', 'netns', 'x')]);
  });

  it('tries the path a record holds inside each of them before its named namespaces', () => {
    file(proc('300', 'root', 'srv', 'pinned'));
    const paths = hostPaths(foreignMountCandidates(budget(), roots, '/srv/pinned'));
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
    const paths = hostPaths(namespaceCandidates(budget(), roots));
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

describe('bounds on other containers\' directories', () => {
  function plant(pid: string, count: number): string {
    file(proc(pid, 'ns', 'mnt'));
    const netnsDir = proc(pid, 'root', 'run', 'netns');
    mkdirSync(netnsDir, { recursive: true });
    for (let i = 0; i < count; i++) writeFileSync(join(netnsDir, `junk${i}`), '');
    return netnsDir;
  }

  it('reads at most entriesPerDir entries of one directory and says which directory it gave up on', () => {
    const hostile = plant('500', 300);
    const b = budget({ entriesPerDir: 50 });
    const gone = refTo(file(join(dir, 'gone')), null);
    rmSync(join(dir, 'gone'));
    expect(findNamespacePath(gone, roots, b)).toBeNull();
    // 200's and 300's one entry each, and 50 of the planted 300
    expect(b.entriesRead).toBe(52);
    expect(b.skipped).toEqual([expect.stringContaining(`skipped ${hostile} after 50 entries`)]);
  });

  it('reads at most entriesPerCall entries over every directory of one call, every search of it together', () => {
    plant('500', 40);
    plant('600', 40);
    const b = budget({ entriesPerCall: 60 });
    const gone = { id: { dev: 1, ino: 1 }, path: null, pid: null, initial: false };
    expect(findNamespacePath(gone, roots, b)).toBeNull();
    expect(b.entriesRead).toBe(60);
    expect(findNamespacePath(gone, roots, b)).toBeNull();
    expect(b.entriesRead).toBe(60);
    expect(b.skipped.length).toBeGreaterThanOrEqual(2);
    expect(b.skipped.every((line) => line.includes('entries per call (60)'))).toBe(true);
  });

  /** A 300-entry directory, read once over its bound of 50 (what a search read, 52: 200's and 300's one entry each). */
  function overItsBoundOnce(): { hostile: string; gone: NamespaceRef; read: (b: SearchBudget) => number } {
    const hostile = plant('500', 300);
    const gone = { id: { dev: 1, ino: 1 }, path: null, pid: null, initial: false };
    const read = (b: SearchBudget) => {
      findNamespacePath(gone, roots, b);
      return b.entriesRead;
    };
    expect(read(budget({ entriesPerDir: 50 }))).toBe(52);
    return { hostile, gone, read };
  }

  it('skips at once a directory that went over its bound while it is unchanged, and reads it again once it changes', () => {
    const { hostile, gone } = overItsBoundOnce();
    const again = budget({ entriesPerDir: 50 });
    findNamespacePath(gone, roots, again);
    expect(again.entriesRead).toBe(2);
    expect(again.skipped).toEqual([`namespace search skipped ${hostile}: over the bounds of one directory when last read, unchanged since`]);
    writeFileSync(join(hostile, 'one-more'), '');
    const changed = budget({ entriesPerDir: 50 });
    findNamespacePath(gone, roots, changed);
    expect(changed.entriesRead).toBe(52);
  });

  it('reads a directory that went over its bound and keeps changing again no sooner than oversizedRereadMs after its last read', () => {
    const { hostile, read } = overItsBoundOnce();
    writeFileSync(join(hostile, 'one-more'), '');
    const soon = budget({ entriesPerDir: 50, oversizedRereadMs: 3_600_000 });
    expect(read(soon)).toBe(2);
    expect(soon.skipped).toEqual([expect.stringMatching(new RegExp(`^namespace search skipped ${hostile}: over the bounds of one directory when last read, \\d+ ms ago \\(read again at most every 3600000 ms\\)$`))]);
    expect(read(budget({ entriesPerDir: 50, oversizedRereadMs: 0 }))).toBe(52);
  });

  // The time bounds, on a clock the test moves (performance, faked): each entry read costs what the test says, so
  // the counts are exact whatever the machine's load.
  describe('time', () => {
    // The faked clock starts at 0 in each test: moved past the real one and past where it was in an earlier test, so
    // a directory remembered as over its bounds (the search's memory, by identity: a removed directory's inode comes
    // back) is never taken as read a moment ago
    let hours = 0;
    beforeEach(() => {
      const real = performance.now();
      vi.useFakeTimers({ toFake: ['performance'] });
      vi.advanceTimersByTime(real + ++hours * 3_600_000);
    });
    afterEach(() => vi.useRealTimers());

    /** Reads `dir` through `b`, each entry taking `msEach` ms; how many it read. */
    function readTimed(b: SearchBudget, d: string, msEach: number): number {
      let n = 0;
      for (const _entry of b.entries(d)) {
        n++;
        vi.advanceTimersByTime(msEach);
      }
      return n;
    }

    it('reads one directory for at most msPerDir and says it gave up on it for the time', () => {
      const hostile = plant('500', 300);
      const b = budget({ msPerDir: 50 });
      expect(readTimed(b, hostile, 10)).toBe(5);
      expect(b.skipped).toEqual([`namespace search skipped ${hostile} after 5 entries: bound of time per directory (50 ms) reached`]);
    });

    it('spends at most msPerCall over every directory of one call, what a search elsewhere spent counted too', () => {
      const first = plant('500', 40);
      const second = plant('600', 40);
      const b = budget({ msPerCall: 65 });
      expect(readTimed(b, first, 1)).toBe(40);
      // the time of another thread's search of the same call, absorbed: the call has 5 ms left
      b.absorb({ entriesRead: 0, msSpent: 20, skipped: [] });
      expect(b.remaining().msPerCall).toBe(5);
      expect(readTimed(b, second, 1)).toBe(5);
      expect(b.skipped).toEqual([`namespace search skipped ${second} after 5 entries: bound of time per call (65 ms) reached`]);
      // the call's time is spent: a later directory is not opened at all
      expect(readTimed(b, first, 1)).toBe(0);
      expect(b.skipped[1]).toBe(`namespace search skipped ${first} after 0 entries: bound of time per call (65 ms) reached`);
    });
  });

  it('still finds a pod namespace in a node that lists before the hostile directory', () => {
    plant('500', 300);
    const pod = proc('200', 'root', 'run', 'netns', 'cni-pod1');
    expect(findNamespacePath(refTo(pod, '/elsewhere'), roots, budget({ entriesPerDir: 50 }))).toBe(pod);
  });
});

describe('links inside a container', () => {
  it('a link dangling inside the container is not followed into our own tree', () => {
    // a file of "ours", reached by an absolute path: the container's link names it, but inside the container
    // that path does not exist
    const ours = file(join(dir, 'host', 'netns', 'host1'));
    symlinkSync(ours, proc('300', 'root', 'var', 'run', 'netns', 'dangling'));
    expect(findNamespacePath(refTo(ours, null), roots)).toBeNull();
  });

  it('a link resolving inside the container is followed there', () => {
    const inside = file(proc('300', 'root', 'srv', 'real'));
    symlinkSync('/srv/real', proc('300', 'root', 'var', 'run', 'netns', 'viaLink'));
    expect(findNamespacePath(refTo(inside, null), roots)).toBe(inside);
  });
});
