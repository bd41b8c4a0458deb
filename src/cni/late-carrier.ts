// The daemon's ADD does not wait for a carrier the pod does not need. A NIC without carrier when the pod interface
// comes up (its peer or cable down, a VF following its PF) makes the one-shot plugin wait up to 200 ms, as sriov-cni
// does, then announce the pod's IPv4 addresses if the carrier came meanwhile (pod-link-ready.ts). A resident daemon
// can do better: answer the ADD at once and keep watching the link, off the call, and send the gratuitous ARPs when
// the carrier comes (IPv6 needs nothing: with ndisc_notify the kernel sends its unsolicited NA when DAD, which
// starts with the carrier, completes).
//
// A watch is bounded (WATCH_MS: past it the pod is left to ordinary ARP, as after the one-shot wait), ends when the
// link leaves the pod (gone, renamed, another link at its index), and is stopped by the DEL of its attachment (GC's
// and ADD's release of an abandoned one too) and by the daemon's shutdown. It holds the pod's namespace open while
// it runs. Its packets are sent from inside the pod's namespace (the addon's packet socket is made there), so they
// can reach the NIC only while the NIC is in the pod: never once it is home.
import { connect, LINK_FLAGS, openNetns, type Netns, type Rtnl } from '../net';
import { ownerKey, type Owner } from '../lend';
import { announceIpv4 } from './pod-link-ready';
import { runWaits } from '../util/wait';

/** How long a watch lasts: a NIC negotiating its link or a VF following its PF gets carrier within seconds. */
export const WATCH_MS = 30_000;
/** The first look comes soon (most carriers come within milliseconds), then less often, up to MAX_POLL_MS. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;

interface Watch {
  timer: NodeJS.Timeout;
  end(): void;
}

/** What the pod's interface was when ADD returned: where to look for the carrier, and what to announce. */
export interface LateCarrierLink {
  netnsPath: string;
  index: number;
  name: string;
  ipv4: string[];
}

type LogLine = (line: string) => void;

let sink: LogLine | null = null;
const watches = new Map<string, Watch>();

/**
 * The daemon's switch: with a log sink, ADD answers without waiting for carrier and announces late; without (the
 * one-shot plugin, and the daemon once it stops), ADD waits as before. Turning it off stops every watch.
 */
export function lateCarrierAnnouncements(log: LogLine | null): void {
  if (!log) for (const key of [...watches.keys()]) stop(key, 'the daemon stops');
  sink = log;
}

/** Whether ADD may answer before the carrier comes (only where a watch can outlive the call: the daemon). */
export function announcesLate(): boolean {
  return sink !== null;
}

/** Watches running now (the daemon's status shows them). */
export function carrierWatches(): number {
  return watches.size;
}

/** Stop the watch of `owner`'s attachment, if any (its DEL, or its release from the record). */
export function stopCarrierWatch(owner: Owner, why: string): void {
  stop(ownerKey(owner), why);
}

/** Start watching for the carrier of `link`; a watch the owner already had is replaced. Best effort: a failure is logged. */
export function watchCarrier(owner: Owner, link: LateCarrierLink): void {
  const log = sink;
  const key = ownerKey(owner);
  if (!log || link.ipv4.length === 0) return;
  stop(key, 'replaced');
  let ns: Netns | null = null;
  let rtnl: Rtnl | null = null;
  try {
    ns = openNetns(link.netnsPath);
    rtnl = connect(ns);
  } catch (err) {
    rtnl?.close();
    ns?.close();
    log(`${key}: not watching for the carrier of ${link.name}: ${(err as Error).message}`);
    return;
  }
  const deadline = Date.now() + WATCH_MS;
  const opened = { ns, rtnl };
  const watch: Watch = {
    timer: lookIn(FIRST_POLL_MS),
    end() {
      clearTimeout(watch.timer);
      opened.rtnl.close();
      opened.ns.close();
    },
  };
  watches.set(key, watch);

  function lookIn(ms: number): NodeJS.Timeout {
    return setTimeout(() => void look(ms).catch((err: unknown) => stop(key, `watch failed: ${(err as Error).message}`)), ms);
  }

  async function look(waitedMs: number): Promise<void> {
    if (watches.get(key) !== watch) return;
    let state: 'running' | 'waiting' | 'left';
    try {
      // off the daemon's thread: the lookup waits for RTNL while other pods' NICs move
      const l = await runWaits(opened.rtnl.steps.findLink({ index: link.index }));
      state = !l || l.name !== link.name ? 'left' : l.flags & LINK_FLAGS.RUNNING ? 'running' : 'waiting';
    } catch {
      state = 'left';
    }
    // stopped while it looked (a DEL, a newer ADD): its socket is closed, nothing more to do
    if (watches.get(key) !== watch) return;
    if (state === 'running') {
      const failed = announceIpv4(opened.rtnl, link.index, link.ipv4);
      stop(key, null);
      log!(`${key}: carrier came after ADD: announced ${link.ipv4.join(', ')} on ${link.name}${failed.length ? ` (${failed.join('; ')})` : ''}`);
      return;
    }
    if (state === 'left') return stop(key, `${link.name} left the pod`);
    if (Date.now() >= deadline) return stop(key, `no carrier within ${WATCH_MS / 1000} s: left to ordinary ARP`);
    const next = Math.min(waitedMs * 2, MAX_POLL_MS);
    watch.timer = lookIn(next);
  }
}

function stop(key: string, why: string | null): void {
  const w = watches.get(key);
  if (!w) return;
  watches.delete(key);
  w.end();
  if (why) sink?.(`${key}: stopped watching for carrier: ${why}`);
}
