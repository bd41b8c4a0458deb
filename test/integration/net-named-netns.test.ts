// Named namespaces made and removed in-process (src/net/named-netns.ts), the way `ip netns add/del` does it: the
// same files, the same mounts, usable by iproute2 in both directions.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, createNamedNetns, currentNetns, deleteNamedNetns, NETNS_RUN_DIR, openNetns, sameNetns, type SysError } from '../../src/net';
import { ip, ipJson, Scratch } from '../helpers/kernel';

let scratch: Scratch;
beforeEach(() => {
  scratch = new Scratch();
});
afterEach(() => scratch.cleanup());

/** Our namespace named `<prefix><suffix>` in /var/run/netns, removed by cleanup even if the test fails. */
function ours(suffix: string): string {
  const name = scratch.name(suffix);
  scratch.onCleanup(() => {
    if (existsSync(join(NETNS_RUN_DIR, name))) ip('netns', 'del', name);
  });
  createNamedNetns(name);
  return name;
}

function caught(fn: () => unknown): SysError & TypeError {
  try {
    fn();
  } catch (err) {
    return err as SysError & TypeError;
  }
  throw new Error('expected a failure');
}

const listed = () => ip('netns', 'list').split('\n').map((l) => l.split(' ')[0]);

describe('createNamedNetns / deleteNamedNetns', () => {
  it('makes a namespace iproute2 lists and enters, with loopback up, and removes it', () => {
    const name = ours('a');
    expect(listed()).toContain(name);
    const ns = openNetns(join(NETNS_RUN_DIR, name));
    const here = currentNetns();
    try {
      expect(sameNetns(ns.id, here.id)).toBe(false);
      const rtnl = connect(ns);
      try {
        expect(rtnl.getLink({ name: 'lo' }).up).toBe(true);
      } finally {
        rtnl.close();
      }
      // iproute2 enters it like one of its own
      expect(ipJson<any[]>('-n', name, 'link', 'show', 'lo')[0].flags).toContain('UP');
    } finally {
      ns.close();
      here.close();
    }
    deleteNamedNetns(name);
    expect(listed()).not.toContain(name);
    expect(existsSync(join(NETNS_RUN_DIR, name))).toBe(false);
  });

  it('leaves the run directory a shared mount point, as ip netns add does', () => {
    ours('b');
    const line = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === NETNS_RUN_DIR || l.split(' ')[4] === '/run/netns');
    expect(line, 'run dir is a mount point').toBeDefined();
    expect(line).toMatch(/ shared:\d+/);
  });

  it('works both ways with iproute2: ip deletes ours, we delete ip\'s', () => {
    const a = ours('c');
    ip('netns', 'del', a);
    expect(listed()).not.toContain(a);
    const b = scratch.netns('d');
    deleteNamedNetns(b);
    expect(listed()).not.toContain(b);
  });

  it('a taken name is EEXIST and the namespace there is untouched', () => {
    const name = ours('e');
    const before = statSync(join(NETNS_RUN_DIR, name)).ino;
    const e = caught(() => createNamedNetns(name));
    expect(e.code).toBe('EEXIST');
    expect(e.message).toContain(join(NETNS_RUN_DIR, name));
    expect(statSync(join(NETNS_RUN_DIR, name)).ino).toBe(before);
  });

  it('deleting a name that does not exist is ENOENT', () => {
    expect(caught(() => deleteNamedNetns(scratch.name('nx'))).code).toBe('ENOENT');
  });

  it('a plain file left by a crash before the mount is removed by delete', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sriovctl-netns-'));
    try {
      writeFileSync(join(dir, 'left'), '');
      deleteNamedNetns('left', dir);
      expect(existsSync(join(dir, 'left'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a name that is not one file name, before touching anything', () => {
    for (const bad of ['', '.', '..', 'a/b', '../x', 'a\0b', 'x'.repeat(256), 7 as unknown as string]) {
      expect(() => createNamedNetns(bad), String(bad)).toThrow(TypeError);
      expect(() => deleteNamedNetns(bad), String(bad)).toThrow(TypeError);
    }
  });
});

describe("a namespace's cookie (SO_NETNS_COOKIE)", () => {
  it('is the same on every socket in one namespace, another in another namespace, and not that of a namespace made after one was removed', () => {
    const a = ours('ck1');
    const b = ours('ck2');
    const cookieIn = (name: string) => {
      const ns = openNetns(join(NETNS_RUN_DIR, name));
      const [one, two] = [connect(ns), connect(ns)];
      try {
        expect(one.netnsCookie()).toBe(two.netnsCookie());
        return one.netnsCookie();
      } finally {
        one.close();
        two.close();
        ns.close();
      }
    };
    const own = connect();
    try {
      expect(own.netnsCookie()).toMatch(/^[0-9]+$/);
      expect(cookieIn(a)).not.toBe(own.netnsCookie());
    } finally {
      own.close();
    }
    const first = cookieIn(a);
    expect(cookieIn(b)).not.toBe(first);
    // a namespace made under the same name (and, as often as not, with the same inode): a cookie never seen before
    deleteNamedNetns(a);
    createNamedNetns(a);
    expect(cookieIn(a)).not.toBe(first);
  });
});
