// Replies are taken only from the kernel: another socket in the namespace (a process with CAP_NET_ADMIN in a pod)
// can address ours and queue messages that look exactly like the kernel's replies to our next request — right
// sequence number, our port id — and they must change nothing: not a link in a dump, not an error for a request.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { native, type NativeRtnlSocket } from '../../src/native';
import type { Netns } from '../../src/net';
import { Scratch } from '../helpers/kernel';

const FORGE = join(__dirname, '..', 'helpers', 'netlink-forge.py');

let s: Scratch;
let ns: string;
let netns: Netns;
let sock: NativeRtnlSocket;

beforeEach(() => {
  s = new Scratch();
  ({ name: ns, ns: netns } = s.openedNetns('forge'));
  sock = new native.RtnlSocket(netns.fd, 15_000);
  s.onCleanup(() => sock.close());
});
afterEach(() => s.cleanup());

/** Queue the forgeries on our socket, addressed for its next request, from a socket in the same namespace. */
function forgeNextReply(forgedName: string): void {
  const { portId, nextSeq } = sock.addressing();
  execFileSync('ip', ['netns', 'exec', ns, 'python3', FORGE, String(portId), String(nextSeq), forgedName], { stdio: 'pipe' });
}

describe('forged netlink replies', () => {
  it('a forged dump queued before the real one adds no link', () => {
    const forged = s.name('fake');
    forgeNextReply(forged);
    const names = sock.listLinks().map((l) => l.name);
    expect(names).toContain('lo');
    expect(names).not.toContain(forged);
  });

  it('a forged error queued before the real ack fails nothing', () => {
    forgeNextReply(s.name('fake'));
    // the forged NLMSG_ERROR (EPERM) for this request's sequence number is queued ahead of the kernel's ack
    const lo = sock.getLink(0, 'lo', false);
    expect(lo.name).toBe('lo');
    forgeNextReply(s.name('fake'));
    expect(() => sock.setLink(lo.index, { alias: 'still ours' })).not.toThrow();
    expect(sock.getLink(lo.index, '', false).alias).toBe('still ours');
  });

  it('sequence numbers are not guessable from the clock: two sockets opened together start apart', () => {
    const other = new native.RtnlSocket(netns.fd, 15_000);
    try {
      const a = sock.addressing();
      const b = other.addressing();
      expect(a.portId).not.toBe(b.portId);
      // with time() seeds both would be within a second of each other; 2^32 values make a collision negligible
      expect(Math.abs(a.nextSeq - b.nextSeq)).toBeGreaterThan(1000);
    } finally {
      other.close();
    }
  });
});
