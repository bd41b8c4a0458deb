// Whom the daemon serves: a caller that could do the work itself. It acts with all of root's privileges on the
// host, so a caller is served only when it holds CAP_NET_ADMIN and CAP_SYS_ADMIN in the daemon's user namespace
// (the initial one, where the daemon runs) and is in the network and mount namespaces the daemon serves (its own,
// and pid 1's when it serves the host from a container): there, the caller could move the NICs and write the
// ledger itself, and every path it names means what it means to the daemon. Anyone else is declined before anything is read (the shim then runs the one-shot plugin with the
// caller's own privileges). Everything is read of the process behind the peer's pidfd: /proc/<pid> is read by
// number, then the pidfd is checked to be still alive — a process that is alive still holds its pid, so what was
// read was its own, never that of a process that took the pid after the caller exited. A kernel without
// SO_PEERPIDFD gives the pidfd only from the pid, which another process may have taken before it was opened: there
// the process must also hold this connection's other end, or it is not the caller.
import { closeSync, opendirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { native } from '../native';

/** The namespaces a caller must share with the daemon, by the name /proc/<pid>/ns gives them. */
const NAMESPACES = ['user', 'net', 'mnt'] as const;
type Namespace = (typeof NAMESPACES)[number];
const NAMESPACE_LABEL: Record<Namespace, string> = { user: 'user', net: 'network', mnt: 'mount' };

/** Each namespace's identity: "device:inode" of its nsfs file. */
export type NamespaceIds = Record<Namespace, string>;

const CAP_NET_ADMIN = 12n;
const CAP_SYS_ADMIN = 21n;
const REQUIRED_CAPS = (1n << CAP_NET_ADMIN) | (1n << CAP_SYS_ADMIN);

export type PeerJudgement =
  /** hostMounts: the caller is in pid 1's mount namespace, not the daemon's own. */
  | { serve: true; pid: number; hostMounts: boolean }
  /** refused: not root at all (answered as such); else declined to the one-shot plugin. */
  | { serve: false; refused: boolean; reason: string };

/** The namespaces of `procDir` (/proc/self, /proc/<pid>). */
export function namespacesOf(procDir: string): NamespaceIds {
  const ids = {} as NamespaceIds;
  for (const ns of NAMESPACES) {
    const st = statSync(`${procDir}/ns/${ns}`);
    ids[ns] = `${st.dev}:${st.ino}`;
  }
  return ids;
}

/**
 * The namespaces the daemon serves: its own, and — for a daemon in a container serving the host (hostPID) — also
 * pid 1's mount namespace (`hostMnt`), whose callers' paths are checked call by call (./host-paths.ts). Read
 * once at start: a daemon serves the namespaces it started with.
 */
export interface ServedNamespaces {
  own: NamespaceIds;
  hostMnt: string | null;
}

export function servedNamespaces(hostMountsOf: number | null): ServedNamespaces {
  const own = namespacesOf('/proc/self');
  const hostMnt = hostMountsOf === null ? null : namespacesOf(`/proc/${hostMountsOf}`).mnt;
  return { own, hostMnt: hostMnt === own.mnt ? null : hostMnt };
}

/** Who is at the other end of the connected unix socket `fd`, and whether the daemon serves it. */
export function judgePeer(fd: number, served: ServedNamespaces): PeerJudgement {
  let peer: ReturnType<typeof native.peerPidfd>;
  try {
    peer = native.peerPidfd(fd);
  } catch (err) {
    return { serve: false, refused: true, reason: `a connection: no peer credentials (${(err as Error).message})` };
  }
  try {
    if (peer.uid !== 0) return { serve: false, refused: true, reason: `pid ${peer.pid}: uid ${peer.uid} is not root` };
    let facts: PeerFacts;
    try {
      facts = readPeer(peer.pid);
      // a pidfd from the pid alone may be of a process that took the pid after the caller exited
      if (!peer.fromSocket && !holdsPeerEnd(peer.pid, fd)) return declined(`pid ${peer.pid} does not hold the connection: the caller exited and its pid is another process's`);
    } catch (err) {
      return declined(`pid ${peer.pid} cannot be examined (${(err as Error).message})`);
    }
    if (!native.pidfdAlive(peer.pidfd)) return declined(`pid ${peer.pid} exited while it was examined`);
    const problem = peerProblem(facts, served);
    return problem ? declined(`pid ${peer.pid} ${problem}`) : { serve: true, pid: peer.pid, hostMounts: facts.ns.mnt !== served.own.mnt };
  } finally {
    closeSync(peer.pidfd);
  }
}

const declined = (reason: string): PeerJudgement => ({ serve: false, refused: false, reason });

export interface PeerFacts {
  /** CapEff of /proc/<pid>/status. */
  capEff: bigint;
  ns: NamespaceIds;
}

function readPeer(pid: number): PeerFacts {
  if (pid <= 0) throw new Error('it has no pid in our pid namespace');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^CapEff:\s*([0-9a-f]{1,16})$/m.exec(status);
  if (!m) throw new Error('no CapEff in its status');
  return { capEff: BigInt(`0x${m[1]}`), ns: namespacesOf(`/proc/${pid}`) };
}

/** Most descriptors of a caller looked through for the connection: a process with more is not judged (one-shot). */
const MAX_PEER_FDS = 4096;

/**
 * Whether process `pid` holds the other end of the connected unix socket `fd` (one of its descriptors is that
 * socket): the pid still names the process that connected. A process that took the pid after the caller exited
 * does not hold it (a child that inherited it does: it holds the connection, and is judged on its own).
 */
function holdsPeerEnd(pid: number, fd: number): boolean {
  const wanted = `socket:[${native.unixPeerInode(fd)}]`;
  const dir = opendirSync(`/proc/${pid}/fd`, { bufferSize: 64 });
  try {
    for (let seen = 0; seen < MAX_PEER_FDS; seen++) {
      const entry = dir.readSync();
      if (!entry) return false;
      try {
        if (readlinkSync(`/proc/${pid}/fd/${entry.name}`) === wanted) return true;
      } catch {
        // closed meanwhile
      }
    }
    return false;
  } finally {
    dir.closeSync();
  }
}

/** Why a caller with these facts could not do the daemon's work itself, or null when it could. */
export function peerProblem(facts: PeerFacts, served: ServedNamespaces): string | null {
  for (const ns of NAMESPACES) {
    const ok = facts.ns[ns] === served.own[ns] || (ns === 'mnt' && facts.ns.mnt === served.hostMnt);
    if (!ok) return `is in another ${NAMESPACE_LABEL[ns]} namespace than the daemon serves`;
  }
  if ((facts.capEff & REQUIRED_CAPS) !== REQUIRED_CAPS) {
    return `lacks CAP_NET_ADMIN and CAP_SYS_ADMIN (CapEff ${facts.capEff.toString(16).padStart(16, '0')})`;
  }
  return null;
}
