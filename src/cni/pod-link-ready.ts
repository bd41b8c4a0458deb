// After the pod interface is up: wait (bounded) for its carrier, for IPv6 duplicate address detection to finish,
// and announce IPv4 addresses the kernel could not announce itself.
//
// - Carrier: a NIC may get carrier some time after it is set up (link negotiation, a VF following its PF). The
//   kernel's gratuitous ARP (arp_notify) goes out at link-up only; without carrier then, it is lost. sriov-cni
//   waits up to 200 ms for carrier and then announces every address itself; so do we, but only when the carrier
//   came late (otherwise the kernel's announcement already went out, and a packet socket of ours would cost an
//   RCU grace period on close). IPv6 needs nothing from us: DAD starts when carrier comes, and with ndisc_notify
//   the kernel sends an unsolicited NA when it completes. A NIC still without carrier after the wait is left to
//   announce itself through ordinary ARP; waiting longer would delay every pod on a NIC with a cable out.
// - DAD: as libcni's ip.SettleAddresses, poll until no IPv6 address of the link is tentative (5 s bound); a
//   DAD failure (another host has the address) fails the ADD. Unlike libcni we settle whenever an IPv6 address
//   was added (libcni: only with an IPv6 gateway), so no address is tentative when ADD returns, and only when
//   there is carrier (without it DAD cannot run, and libcni just waits out its bound).
import { ADDRESS_FLAGS, LINK_FLAGS, type Rtnl } from '../net';
import { waitUntil, type WaitingSteps } from '../util/wait';
import { CNI_ERR, CniError } from './errors';
import { log } from './log';

/** libcni's bound on DAD (dadSettleTimeout). */
const DAD_SETTLE_MS = 5000;
const DAD_POLL_MS = 50;
const CARRIER_POLL_MS = 5;

export interface CarrierState {
  /** The link is operational (IFF_RUNNING: carrier, and the kernel has activated its queues). */
  running: boolean;
  /** There was no carrier when the link came up, so the kernel's own announcement was lost. */
  late: boolean;
}

/** Call right after the link was set up. waitMs null: one look, no wait (the daemon announces late, see late-carrier.ts). */
export function* awaitCarrier(rtnl: Rtnl, index: number, waitMs: number | null): WaitingSteps<CarrierState> {
  const flags = (): number => rtnl.getLink({ index }).flags;
  const first = (yield* rtnl.steps.getLink({ index })).flags;
  const late = (first & LINK_FLAGS.LOWER_UP) === 0;
  if (first & LINK_FLAGS.RUNNING) return { running: true, late };
  if (waitMs === null) {
    log.info('no carrier yet: the addresses are announced when it comes');
    return { running: false, late };
  }
  const running = yield* waitUntil({ done: () => (flags() & LINK_FLAGS.RUNNING) !== 0, timeoutMs: waitMs, pollMs: CARRIER_POLL_MS });
  if (!running) log.info(`no carrier within ${waitMs} ms: addresses are not announced now`);
  return { running, late };
}

/** Wait until no IPv6 address of the link is tentative; throws (103) on a DAD failure or a timeout. */
export function* settleAddresses(rtnl: Rtnl, index: number, ifname: string): WaitingSteps<void> {
  const seen = { failed: undefined as string | undefined };
  const settled = (): boolean => {
    const addrs = rtnl.listAddresses({ index, family: 6 });
    seen.failed = addrs.find((a) => a.flags & ADDRESS_FLAGS.DADFAILED)?.cidr;
    return seen.failed !== undefined || !addrs.some((a) => a.flags & ADDRESS_FLAGS.TENTATIVE);
  };
  const done = yield* waitUntil({ done: settled, timeoutMs: DAD_SETTLE_MS, pollMs: DAD_POLL_MS });
  const failed = seen.failed;
  if (failed) throw new CniError(CNI_ERR.POD_CONFIG_FAILED, `${ifname}: IPv6 address ${failed} failed duplicate address detection (in use on the link)`, failed);
  if (!done) throw new CniError(CNI_ERR.POD_CONFIG_FAILED, `${ifname} still has tentative IPv6 addresses after ${DAD_SETTLE_MS / 1000} s`, ifname);
}

/**
 * Gratuitous ARP for each IPv4 address, best effort (announcing is a courtesy, as in sriov-cni). Returns what failed
 * ('<address>: <why>'), each also a debug line of the call's log.
 */
export function announceIpv4(rtnl: Rtnl, index: number, ipv4: string[]): string[] {
  const failed: string[] = [];
  for (const address of ipv4) {
    try {
      rtnl.sendGratuitousArp(index, address);
      log.debug(`announced ${address} (carrier came after link-up)`);
    } catch (err) {
      failed.push(`${address}: ${(err as Error).message}`);
      log.debug(`gratuitous ARP for ${failed.at(-1)}`);
    }
  }
  return failed;
}
