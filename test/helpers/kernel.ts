// Shared scratch space for tests that touch the real kernel: unique names, and cleanup that always runs.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { connect, openNetns, type Netns, type Rtnl } from '../../src/net';

export const isRoot = process.getuid?.() === 0;

/** A short unique prefix ('t' + 4 hex), so names stay within IFNAMSIZ and runs never collide. */
export function uniquePrefix(): string {
  // 16 random bits alone collide now and then among the files that run at once (a namespace of another test's
  // with the same name: "File exists"): a prefix already handed out here, or already named in /run/netns or among
  // the initial namespace's links, is drawn again
  for (;;) {
    const prefix = 't' + randomBytes(2).toString('hex');
    if (!prefixesHandedOut.has(prefix) && !prefixInUse(prefix)) {
      prefixesHandedOut.add(prefix);
      return prefix;
    }
  }
}

const prefixesHandedOut = new Set<string>();

function prefixInUse(prefix: string): boolean {
  let netns: string[] = [];
  try {
    netns = readdirSync('/run/netns');
  } catch {
    // no named namespace yet
  }
  let links: string[] = [];
  try {
    links = readdirSync('/sys/class/net');
  } catch {
    // no sysfs: names are checked by the kernel anyway
  }
  return [...netns, ...links].some((n) => n.startsWith(prefix));
}

/** Run `ip` and return stdout (throws with stderr on failure). */
export function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `ip -j …` parsed. */
export function ipJson<T = any>(...args: string[]): T {
  const out = ip('-j', ...args).trim();
  return (out ? JSON.parse(out) : []) as T;
}

/** Run `ip` inside a named namespace. */
export function ipIn(netns: string, ...args: string[]): string {
  return ip('-n', netns, ...args);
}

/** The link as `ip -j -d link show` sees it, or null. */
export function linkJson(name: string, netns?: string): any | null {
  try {
    const args = netns ? ['-n', netns] : [];
    return ipJson<any[]>(...args, '-d', 'link', 'show', 'dev', name)[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * Everything a test creates, removed in reverse order by cleanup() (call it from afterEach/finally).
 * Names are prefixed with the scratch's prefix, so leftovers are recognisable.
 */
export class Scratch {
  readonly prefix = uniquePrefix();
  private readonly undo: (() => void)[] = [];

  /** `<prefix><suffix>`, checked against IFNAMSIZ. */
  name(suffix: string): string {
    const n = this.prefix + suffix;
    if (Buffer.byteLength(n) > 15) throw new Error(`test name too long: ${n}`);
    return n;
  }

  /** A named namespace under /var/run/netns (lo up). */
  netns(suffix: string): string {
    const n = this.name(suffix);
    ip('netns', 'add', n);
    this.undo.push(() => ip('netns', 'del', n));
    ip('-n', n, 'link', 'set', 'lo', 'up');
    return n;
  }

  /** A named namespace opened through the addon; closed by cleanup(). */
  openedNetns(suffix: string): { name: string; ns: Netns } {
    const name = this.netns(suffix);
    const ns = openNetns(`/var/run/netns/${name}`);
    this.onCleanup(() => ns.close());
    return { name, ns };
  }

  /** A named namespace opened through the addon, with an Rtnl in it; both closed by cleanup(). */
  netnsWithRtnl(suffix: string): { name: string; ns: Netns; rtnl: Rtnl } {
    const { name, ns } = this.openedNetns(suffix);
    const rtnl = connect(ns);
    this.onCleanup(() => rtnl.close());
    return { name, ns, rtnl };
  }

  /** A veth pair in the host namespace (or `netns`); returns the first end's name. */
  veth(suffix: string, peerSuffix: string, netns?: string): [string, string] {
    const a = this.name(suffix);
    const b = this.name(peerSuffix);
    const nsArgs = netns ? ['-n', netns] : [];
    ip(...nsArgs, 'link', 'add', a, 'type', 'veth', 'peer', 'name', b);
    this.onCleanup(() => {
      // the pair may have moved: try both ends everywhere we know
      for (const n of [a, b]) deleteLinkAnywhere(n, netns);
    });
    return [a, b];
  }

  /**
   * A plain link that only occupies a name. The host kernel has no `dummy` driver (no module loading), so this
   * is one end of a veth pair whose other end gets a generated name.
   */
  dummy(suffix: string, netns?: string): string {
    const n = this.name(suffix);
    const peer = this.name(`z${this.peers++}`);
    const nsArgs = netns ? ['-n', netns] : [];
    ip(...nsArgs, 'link', 'add', n, 'type', 'veth', 'peer', 'name', peer);
    this.onCleanup(() => deleteLinkAnywhere(n, netns));
    return n;
  }

  private peers = 0;

  /** Register any undo action (run in reverse order). */
  onCleanup(fn: () => void): void {
    this.undo.push(fn);
  }

  cleanup(): void {
    while (this.undo.length) {
      const fn = this.undo.pop()!;
      try {
        fn();
      } catch {
        // already gone
      }
    }
  }
}

/** Delete a link by name from the host namespace and the given one, ignoring "not found". */
export function deleteLinkAnywhere(name: string, netns?: string): void {
  for (const args of [netns ? ['-n', netns] : null, []]) {
    if (!args) continue;
    try {
      ip(...args, 'link', 'del', name);
    } catch {
      // not there
    }
  }
}

/**
 * Poll `fn` until it returns a truthy value or `timeoutMs` passes (kernel work can be asynchronous). The bound
 * only guards against a hang: generous, since a busy machine delays the kernel's deferred work by seconds.
 */
export async function waitFor<T>(fn: () => T | null | undefined | false, timeoutMs = 60_000, stepMs = 5): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
