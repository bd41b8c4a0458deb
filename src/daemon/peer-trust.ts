// Whom the daemon serves: a caller that could do the work itself. It acts with all of root's privileges on the
// host, so a caller is served only when it holds CAP_NET_ADMIN and CAP_SYS_ADMIN in the daemon's user namespace
// (the initial one, where the daemon runs) and is in the daemon's network namespace: there, the caller could move
// the NICs and write the ledger itself. Its mount namespace and root are no privilege (a caller with those
// capabilities can enter any mount namespace), only its view of the paths a call names: a caller whose view is not
// the daemon's — another mount namespace (a daemon in a container serving the host, thick Multus forking the
// plugin from its own container chrooted into the node's /), or a chroot — is served call by call, when every path
// of the call is the same file from its root as from the daemon's (./caller-paths.ts). Anyone else is declined
// before anything is read (the shim then runs the one-shot plugin with the caller's own privileges). Everything is
// read of the process behind the peer's pidfd: /proc/<pid> is read by number — its root opened and kept, so the
// call's paths are later resolved in that very root — then the pidfd is checked to be still alive: a process that
// is alive still holds its pid, so what was read was its own, never that of a process that took the pid after the
// caller exited. A kernel without SO_PEERPIDFD gives the pidfd only from the pid, which another process may have
// taken before it was opened: there the process must also hold this connection's other end, or it is not the caller.
import { closeSync, constants, openSync, opendirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { native } from '../native';

/** The namespaces a caller must share with the daemon, by the name /proc/<pid>/ns gives them. */
const REQUIRED_NAMESPACES = ['user', 'net'] as const;
/** Those read of a caller: its mount namespace tells whether its paths are checked call by call. */
const NAMESPACES = [...REQUIRED_NAMESPACES, 'mnt'] as const;
type Namespace = (typeof NAMESPACES)[number];
const NAMESPACE_LABEL: Record<Namespace, string> = { user: 'user', net: 'network', mnt: 'mount' };

/** Each namespace's identity: "device:inode" of its nsfs file. */
export type NamespaceIds = Record<Namespace, string>;

const CAP_NET_ADMIN = 12n;
const CAP_SYS_ADMIN = 21n;
const REQUIRED_CAPS = (1n << CAP_NET_ADMIN) | (1n << CAP_SYS_ADMIN);

export type PeerJudgement =
  /**
   * root: for a caller whose view of paths is not the daemon's (another mount namespace, or a chroot), a descriptor
   * of its root, opened while it was judged: its call is served only when every path it uses is the same file
   * there (./caller-paths.ts). The connection's owner closes it. Null: the daemon's own view.
   */
  | { serve: true; pid: number; root: number | null }
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

/** The daemon's own namespaces, read once at start: a daemon serves the namespaces it started with. */
export function servedNamespaces(): NamespaceIds {
  return namespacesOf('/proc/self');
}

/** Who is at the other end of the connected unix socket `fd`, and whether the daemon serves it. */
export function judgePeer(fd: number, served: NamespaceIds): PeerJudgement {
  let peer: ReturnType<typeof native.peerPidfd>;
  try {
    peer = native.peerPidfd(fd);
  } catch (err) {
    return { serve: false, refused: true, reason: `a connection: no peer credentials (${(err as Error).message})` };
  }
  try {
    if (peer.uid !== 0) return { serve: false, refused: true, reason: `pid ${peer.pid}: uid ${peer.uid} is not root` };
    let facts: PeerFacts;
    let root: number | null = null;
    const judged = (j: PeerJudgement): PeerJudgement => {
      if (root !== null && !j.serve) closeSync(root);
      return j;
    };
    try {
      facts = readPeer(peer.pid);
      // read before the pidfd is checked below, like everything else of the caller
      if (peerProblem(facts, served) === null && !ownView(peer.pid, facts, served)) root = openRoot(peer.pid);
      // a pidfd from the pid alone may be of a process that took the pid after the caller exited
      if (!peer.fromSocket && !holdsPeerEnd(peer.pid, fd)) return judged(declined(`pid ${peer.pid} does not hold the connection: the caller exited and its pid is another process's`));
    } catch (err) {
      return judged(declined(`pid ${peer.pid} cannot be examined (${(err as Error).message})`));
    }
    // alive after its root was opened: the root is the caller's own, not that of a process that took its pid
    if (!native.pidfdAlive(peer.pidfd)) return judged(declined(`pid ${peer.pid} exited while it was examined`));
    const problem = peerProblem(facts, served);
    return problem ? declined(`pid ${peer.pid} ${problem}`) : { serve: true, pid: peer.pid, root };
  } finally {
    closeSync(peer.pidfd);
  }
}

/**
 * Whether paths mean to process `pid` what they mean to the daemon without looking at any: the same mount
 * namespace, and its root is the daemon's (/proc/<pid>/root reads "/" to the daemon only when it is the daemon's own
 * root, the same mount of the same directory; a chroot, or a bind mount of / it chrooted into, reads otherwise).
 */
function ownView(pid: number, facts: PeerFacts, served: NamespaceIds): boolean {
  return facts.ns.mnt === served.mnt && readlinkSync(`/proc/${pid}/root`) === '/';
}

/**
 * A descriptor of process `pid`'s root (for a chrooted process, its chroot) in its mount namespace: paths below
 * /proc/self/fd/<it> are resolved there, in the caller's mounts, for as long as the daemon holds it, whatever becomes
 * of the process or its pid.
 */
function openRoot(pid: number): number {
  return openSync(`/proc/${pid}/root`, constants.O_RDONLY | constants.O_DIRECTORY);
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
function peerProblem(facts: PeerFacts, served: NamespaceIds): string | null {
  for (const ns of REQUIRED_NAMESPACES) {
    if (facts.ns[ns] !== served[ns]) return `is in another ${NAMESPACE_LABEL[ns]} namespace than the daemon serves`;
  }
  if ((facts.capEff & REQUIRED_CAPS) !== REQUIRED_CAPS) {
    return `lacks CAP_NET_ADMIN and CAP_SYS_ADMIN (CapEff ${facts.capEff.toString(16).padStart(16, '0')})`;
  }
  return null;
}
