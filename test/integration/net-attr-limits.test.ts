// The addon itself refuses an attribute whose length does not fit netlink's 16-bit rta_len, whoever calls it:
// wrapped, the length would end the attribute early and the kernel would read the rest of the payload as
// attributes of its own — an alias could carry an IFLA_IFNAME and rename the link.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { native, type NativeRtnlSocket } from '../../src/native';
import { ipIn, linkJson, Scratch } from '../helpers/kernel';

const IFLA_IFNAME = 3;

let s: Scratch;
let ns: string;
let sock: NativeRtnlSocket;
let link: { name: string; index: number };

beforeEach(() => {
  s = new Scratch();
  const opened = s.openedNetns('attr');
  ns = opened.name;
  sock = new native.RtnlSocket(opened.ns.fd, 15_000);
  s.onCleanup(() => sock.close());
  const name = s.name('a0');
  ipIn(ns, 'link', 'add', name, 'type', 'veth', 'peer', 'name', s.name('a1'));
  link = { name, index: sock.getLink(0, name, false).index };
});
afterEach(() => s.cleanup());

function refusal(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the addon to refuse');
}

/** An alias whose 16-bit length wraps to 8, with an IFLA_IFNAME attribute hidden at the point the kernel resumes. */
function aliasThatRenames(newName: string): string {
  const nameLen = 4 + newName.length + 1;
  const aligned = (nameLen + 3) & ~3;
  const header = String.fromCharCode(nameLen & 0xff, nameLen >> 8, IFLA_IFNAME, 0);
  const ifname = header + newName + '\0'.repeat(aligned - 4 - newName.length);
  // attribute length = 4 + (alias + NUL) = 65536 + 8 → 8 once wrapped: "AAAA" is all the kernel takes as the alias
  const total = 65536 + 8 - 4 - 1;
  const fillers = (total - 4 - aligned - 3) / 4;
  return 'AAAA' + ifname + '\x04\0\0\0'.repeat(fillers) + '\x04\0\0';
}

describe('attribute length limits', () => {
  it('a 64 KiB alias is refused with EMSGSIZE before anything is sent', () => {
    const err = refusal(() => sock.setLink(link.index, { alias: 'x'.repeat(65536) }));
    expect(isSysError(err, 'EMSGSIZE'), String(err)).toBe(true);
    expect(err.message).toMatch(/16-bit attribute length/);
    expect(linkJson(link.name, ns)?.ifalias).toBeUndefined();
  });

  it('an alias crafted to smuggle an IFLA_IFNAME past the wrap renames nothing', () => {
    const evil = s.name('evil');
    const alias = aliasThatRenames(evil);
    expect(Buffer.byteLength(alias)).toBe(65539);
    let err: unknown = null;
    try {
      sock.setLink(link.index, { alias });
    } catch (e) {
      err = e;
    }
    expect(linkJson(evil, ns)).toBeNull();
    expect(linkJson(link.name, ns)).not.toBeNull();
    expect(isSysError(err, 'EMSGSIZE'), String(err)).toBe(true);
  });

  it('a request larger than any we build is refused too (a name of 70 000 bytes)', () => {
    const err = refusal(() => sock.getLink(0, 'n'.repeat(70_000), false));
    expect(isSysError(err, 'EMSGSIZE'), String(err)).toBe(true);
  });
});
