// A pod's state in kubectl's words, from its JSON (`kubectl get pods -o json`): Ready or not, and the STATUS
// column kubectl prints (`Init:CrashLoopBackOff`, `ImagePullBackOff`, `Init:0/1`, `Pending`, ...) — the same rules
// as kubectl's printPod (k8s.io/kubernetes pkg/printers/internalversion/printers.go), so `up` names a broken
// component the way a user would see it.

interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: Record<string, unknown>;
  terminated?: { reason?: string; message?: string; exitCode?: number; signal?: number };
}

interface ContainerStatus {
  name?: string;
  ready?: boolean;
  started?: boolean;
  state?: ContainerState;
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

/** The parts of a Pod object read here (everything optional: a pod just created has almost no status). */
export interface PodJson {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { nodeName?: string; initContainers?: { name?: string; restartPolicy?: string }[] };
  status?: {
    phase?: string;
    reason?: string;
    conditions?: Condition[];
    initContainerStatuses?: ContainerStatus[];
    containerStatuses?: ContainerStatus[];
  };
}

export interface PodState {
  name: string;
  node: string | null;
  ready: boolean;
  /** kubectl's STATUS column. */
  status: string;
  /** The message behind the status, when the kubelet gave one (an image pull error, the scheduler's reason). */
  message: string | null;
}

function conditionTrue(pod: PodJson, type: string): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

function terminatedReason(t: NonNullable<ContainerState['terminated']>): string {
  if (t.reason) return t.reason;
  return t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode ?? 0}`;
}

/** kubectl's STATUS of a pod and the message behind it. */
function statusOf(pod: PodJson): { status: string; message: string | null } {
  const st = pod.status ?? {};
  let status = st.reason || st.phase || 'Unknown';
  let message: string | null = null;

  let initializing = false;
  const inits = st.initContainerStatuses ?? [];
  const initSpecs = pod.spec?.initContainers ?? [];
  for (const [i, c] of inits.entries()) {
    const t = c.state?.terminated;
    const w = c.state?.waiting;
    const sidecar = initSpecs.find((s) => s.name === c.name)?.restartPolicy === 'Always';
    if (t && t.exitCode === 0) continue;
    if (sidecar && c.started) continue;
    initializing = true;
    if (t) {
      status = `Init:${terminatedReason(t)}`;
      message = t.message ?? null;
    } else if (w?.reason && w.reason !== 'PodInitializing') {
      status = `Init:${w.reason}`;
      message = w.message ?? null;
    } else {
      status = `Init:${i}/${initSpecs.length || inits.length}`;
    }
    break;
  }

  if (!initializing || conditionTrue(pod, 'Initialized')) {
    let hasRunning = false;
    const containers = st.containerStatuses ?? [];
    for (let i = containers.length - 1; i >= 0; i--) {
      const { state, ready } = containers[i];
      if (state?.waiting?.reason) {
        status = state.waiting.reason;
        message = state.waiting.message ?? null;
      } else if (state?.terminated) {
        status = terminatedReason(state.terminated);
        message = state.terminated.message ?? null;
      } else if (ready && state?.running) {
        hasRunning = true;
      }
    }
    if (status === 'Completed' && hasRunning) status = conditionTrue(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  if (status === 'Pending' && message === null) {
    // not scheduled: the scheduler says why (no node matches the selector, taints, resources)
    const unscheduled = (st.conditions ?? []).find((c) => c.type === 'PodScheduled' && c.status === 'False');
    message = unscheduled?.message ?? null;
  }
  if (pod.metadata?.deletionTimestamp) status = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return { status, message };
}

export function podState(pod: PodJson): PodState {
  const { status, message } = statusOf(pod);
  return {
    name: pod.metadata?.name ?? '?',
    node: pod.spec?.nodeName ?? null,
    ready: conditionTrue(pod, 'Ready') && !pod.metadata?.deletionTimestamp,
    status,
    message,
  };
}

/** One line for a pod that is not Ready: `kube-multus-ds-x7k2p on node agent-0: Init:CrashLoopBackOff (back-off ...)`. */
export function describeNotReady(p: PodState): string {
  const where = p.node ? ` on node ${p.node}` : ' (not scheduled)';
  const why = p.message ? ` (${p.message.split('\n')[0].slice(0, 200)})` : '';
  return `${p.name}${where}: ${p.status}${why}`;
}
