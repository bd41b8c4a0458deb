// The nameservers of a resolv.conf, read as the resolver reads them: the link the host reaches one through is as
// much its way out as the link with the default route (uplink.ts), since without it no name resolves.
import * as fs from 'node:fs';
import { SysError } from '../errors';
import { canonicalIp, type AddressFamily } from '../net';
import { assertRegularFile } from '../fs/state-file';

export interface Nameserver {
  /** Canonical text of the address. */
  address: string;
  family: AddressFamily;
  /** The link an IPv6 link-local address is scoped to (`fe80::1%eth0`): a name or an ifindex; null when none. */
  zone: string | null;
}

/**
 * The `nameserver` lines of resolv.conf `file` (usually a symbolic link: followed; never a FIFO: it is opened
 * non-blocking and must be a regular file). A missing file has none. Lines the resolver would ignore (comments, an
 * address it cannot parse) are ignored here too. A file that cannot be read is a SysError naming it: the rule
 * cannot be applied, so nothing is lent.
 */
export function readNameservers(file: string): Nameserver[] {
  let fd: number | null = null;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    assertRegularFile(fd, file);
    return parseNameservers(fs.readFileSync(fd, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    if (code === 'ENOENT') return [];
    throw new SysError(`${file}: ${(err as Error).message}`, { code, op: 'reading the nameservers' });
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

export function parseNameservers(text: string): Nameserver[] {
  const out: Nameserver[] = [];
  for (const line of text.split('\n')) {
    const m = /^nameserver[ \t]+([^ \t#;]+)/.exec(line);
    if (!m) continue;
    const [address, zone] = m[1].split('%', 2);
    const ip = canonicalIp(address);
    if (!ip || (zone !== undefined && (ip.family !== 6 || zone === ''))) continue;
    out.push({ address: ip.address, family: ip.family, zone: zone ?? null });
  }
  return out;
}
