// `sriovctl nics [--json]`: every SR-IOV PF and VF of the host (sysfs), with its driver, VF count, link state,
// whether it is the host's uplink (which the engine refuses to lend) and where it is lent (the ledger). Reads
// only: nothing is changed, and no state directory is made.
import type { Command } from 'commander';
import { describeNamespace, type LendRecord } from '../lend';
import { listPfs, listVfs, type SriovPf, type SriovVf } from '../sriov';
import { uplinks } from '../cluster/orchestration/host-facts';
import { ageOf } from './age';
import type { CommandIo, CommandKit } from './command-kit';
import { ExitCode } from './exit-codes';
import { readLedger } from './ledger-view';
import { formatTable } from './table';

/** One PF or VF, as `nics --json` prints it (a contract for scripts). */
export interface HostNic {
  kind: 'pf' | 'vf';
  /** Its interface name in this namespace; null when it has none here (lent, bound to a userspace driver). */
  name: string | null;
  /** The PCI address (or the bus device name of a netdevsim PF). */
  address: string;
  driver: string | null;
  /** A PF's sriov_numvfs and sriov_totalvfs (null for a VF, or a PF without sriov_totalvfs). */
  numVfs: number | null;
  totalVfs: number | null;
  /** A VF's PF address and index on it (null for a PF). */
  pf: string | null;
  vfIndex: number | null;
  /** The link's operstate here ('up', 'down', …), null when it has no link here. */
  link: string | null;
  /** The route that makes it the host's way out (never lent without --allow-uplink), or null. */
  uplink: string | null;
  lent: LentTo | null;
}

export interface LentTo {
  key: string;
  owner: string;
  phase: LendRecord['phase'];
  /** The namespace it was lent to, and its name there. */
  target: { namespace: string; name: string };
  since: string;
}

export function registerNicsCommand(program: Command, kit: CommandKit): void {
  program
    .command('nics')
    .description("list the host's SR-IOV PFs and VFs: driver, VF count, link, uplink, and where each is lent")
    .option('--json', 'print a JSON array of objects')
    .action(kit.action<{ json?: boolean }>(() => 'nics', (io, _args, opts) => nics(io, !!opts.json)));
}

function nics(io: CommandIo, json: boolean): ExitCode {
  const list = hostNics(io);
  if (json) io.out.json(list);
  else if (list.length === 0) io.out.line('no SR-IOV PF on this host');
  else io.out.line(formatTable(['NAME', 'ADDRESS', 'KIND', 'DRIVER', 'VFS', 'LINK', 'USE'], list.map(row)));
  return ExitCode.ok;
}

/** Every PF, each followed by its VFs. */
export function hostNics(io: CommandIo): HostNic[] {
  const s = io.session;
  const { records, corrupt } = readLedger(s);
  for (const c of corrupt) io.out.warn(`unreadable record ${c.file}: ${c.error} (run sriovctl cleanup)`);
  const lentByAddress = new Map(records.filter((r) => r.identity.pciAddress).map((r) => [r.identity.pciAddress!, r]));
  const rtnl = s.rtnl(null);
  const wayOut = new Map(uplinks(s).map((u) => [u.name, u.route]));
  const nic = (base: Pick<HostNic, 'kind' | 'address' | 'driver' | 'numVfs' | 'totalVfs' | 'pf' | 'vfIndex'>, netdevs: string[]): HostNic => {
    // sysfs names are hints (sysfs lists the namespace that mounted it): the link must be here, now
    const link = netdevs.map((n) => rtnl.findLink({ name: n })).find((l) => l !== null) ?? null;
    const record = lentByAddress.get(base.address);
    return {
      ...base,
      name: link?.name ?? null,
      link: link?.operstate ?? null,
      uplink: link ? (wayOut.get(link.name) ?? null) : null,
      lent: record ? lentTo(record) : null,
    };
  };
  return listPfs(s.sysfs).flatMap((pf) => [
    nic(pfFields(pf), pf.netdevs.map((n) => n.name)),
    ...vfsOf(io, pf).map((vf) => nic(vfFields(vf), vf.netdevs.map((n) => n.name))),
  ]);
}

function pfFields(pf: SriovPf) {
  return { kind: 'pf' as const, address: pf.address, driver: pf.driver, numVfs: pf.numVfs, totalVfs: pf.totalVfs, pf: null, vfIndex: null };
}

function vfFields(vf: SriovVf) {
  return { kind: 'vf' as const, address: vf.address, driver: vf.driver, numVfs: null, totalVfs: null, pf: vf.pfAddress, vfIndex: vf.index };
}

/** A PF's VFs; one whose VFs cannot be read right now (being removed) is listed alone, with a warning. */
function vfsOf(io: CommandIo, pf: SriovPf): SriovVf[] {
  try {
    return listVfs(io.session.sysfs, pf.address);
  } catch (err) {
    io.out.warn(`${pf.address}: cannot read its VFs: ${(err as Error).message}`);
    return [];
  }
}

export function lentTo(r: LendRecord): LentTo {
  return {
    key: r.key,
    owner: r.owner,
    phase: r.phase,
    target: { namespace: describeNamespace(r.target), name: r.targetName },
    since: r.createdAt,
  };
}

function row(n: HostNic): string[] {
  const name = n.name ?? (n.lent ? 'lent' : '-');
  const kind = n.kind === 'pf' ? 'PF' : `VF ${n.vfIndex}`;
  const vfs = n.kind === 'pf' ? `${n.numVfs}/${n.totalVfs ?? '?'}` : '-';
  return [n.kind === 'vf' ? `  ${name}` : name, n.address, kind, n.driver ?? '-', vfs, n.link ?? '-', use(n)];
}

/** Where it is: lent (to whom, since when), the uplink (refused), or home and free. */
function use(n: HostNic): string {
  if (n.lent) return describeLent(n.lent);
  if (n.uplink) return `uplink, not lent (${n.uplink})`;
  return 'home';
}

/** "lent to /var/run/netns/node1 as net1 by attach:node1 for 3m12s" */
export function describeLent(l: LentTo): string {
  const phase = l.phase === 'lent' ? '' : ` (${l.phase}: sriovctl cleanup finishes it)`;
  return `lent to ${l.target.namespace} as ${l.target.name} by ${l.owner} for ${ageOf(l.since)}${phase}`;
}
