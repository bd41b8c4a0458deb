// A pod's STATUS as kubectl prints it, from the pod JSON the API returns (the shapes below are those the kubelet
// writes for each situation).
import { describe, expect, it } from 'vitest';
import { describeNotReady, podState, type PodJson } from '../../src/cluster/kubernetes/pod-status';

const READY = [{ type: 'Initialized', status: 'True' }, { type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'True' }];
const NOT_READY = [{ type: 'Initialized', status: 'False' }, { type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }];
const INITIALIZED_NOT_READY = [{ type: 'Initialized', status: 'True' }, { type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }];

function pod(status: PodJson['status'], extra: Partial<PodJson> = {}): PodJson {
  return {
    metadata: { name: 'kube-multus-ds-x7k2p', namespace: 'kube-system', labels: { app: 'multus' } },
    spec: { nodeName: 'k3d-lab-agent-0', initContainers: [{ name: 'install-multus-binary' }] },
    status,
    ...extra,
  };
}

const initDone = [{ name: 'install-multus-binary', ready: true, state: { terminated: { exitCode: 0, reason: 'Completed' } } }];
const mainWaitingInit = [{ name: 'kube-multus', ready: false, state: { waiting: { reason: 'PodInitializing' } } }];

describe("a pod's status in kubectl's words", () => {
  const cases: [string, PodJson, { ready: boolean; status: string; message: string | null }][] = [
    [
      'an init container in back-off',
      pod({
        phase: 'Pending',
        conditions: NOT_READY,
        initContainerStatuses: [{ name: 'install-multus-binary', ready: false, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container=install-multus-binary' } } }],
        containerStatuses: mainWaitingInit,
      }),
      { ready: false, status: 'Init:CrashLoopBackOff', message: 'back-off 40s restarting failed container=install-multus-binary' },
    ],
    [
      'an init container whose image cannot be pulled',
      pod({ phase: 'Pending', conditions: NOT_READY, initContainerStatuses: [{ name: 'install-multus-binary', state: { waiting: { reason: 'ErrImagePull', message: 'failed to resolve reference' } } }], containerStatuses: mainWaitingInit }),
      { ready: false, status: 'Init:ErrImagePull', message: 'failed to resolve reference' },
    ],
    [
      'an init container that failed',
      pod({ phase: 'Pending', conditions: NOT_READY, initContainerStatuses: [{ name: 'install-multus-binary', state: { terminated: { exitCode: 1, reason: 'Error' } } }], containerStatuses: mainWaitingInit }),
      { ready: false, status: 'Init:Error', message: null },
    ],
    [
      'an init container that exited without a reason',
      pod({ phase: 'Pending', conditions: NOT_READY, initContainerStatuses: [{ name: 'install-multus-binary', state: { terminated: { exitCode: 2 } } }], containerStatuses: mainWaitingInit }),
      { ready: false, status: 'Init:ExitCode:2', message: null },
    ],
    [
      'an init container still running',
      pod({ phase: 'Pending', conditions: NOT_READY, initContainerStatuses: [{ name: 'install-multus-binary', state: { running: { startedAt: '2026-11-30T15:00:00Z' } } }], containerStatuses: mainWaitingInit }),
      { ready: false, status: 'Init:0/1', message: null },
    ],
    [
      'the main container cannot pull its image',
      pod({ phase: 'Pending', conditions: INITIALIZED_NOT_READY, initContainerStatuses: initDone, containerStatuses: [{ name: 'kube-multus', ready: false, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.4"' } } }] }),
      { ready: false, status: 'ImagePullBackOff', message: 'Back-off pulling image "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.4"' },
    ],
    [
      'the main container crashing',
      pod({ phase: 'Running', conditions: INITIALIZED_NOT_READY, initContainerStatuses: initDone, containerStatuses: [{ name: 'kube-multus', ready: false, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } } }] }),
      { ready: false, status: 'CrashLoopBackOff', message: 'back-off 10s' },
    ],
    [
      'running and Ready',
      pod({ phase: 'Running', conditions: READY, initContainerStatuses: initDone, containerStatuses: [{ name: 'kube-multus', ready: true, state: { running: {} } }] }),
      { ready: true, status: 'Running', message: null },
    ],
    [
      'running but not Ready',
      pod({ phase: 'Running', conditions: INITIALIZED_NOT_READY, initContainerStatuses: initDone, containerStatuses: [{ name: 'kube-multus', ready: false, state: { running: {} } }] }),
      { ready: false, status: 'Running', message: null },
    ],
    [
      'not scheduled',
      pod(
        { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.' }] },
        { spec: {} },
      ),
      { ready: false, status: 'Pending', message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector." },
    ],
    [
      'being deleted',
      pod({ phase: 'Running', conditions: READY, initContainerStatuses: initDone, containerStatuses: [{ name: 'kube-multus', ready: true, state: { running: {} } }] }, {
        metadata: { name: 'kube-multus-ds-x7k2p', deletionTimestamp: '2026-11-30T15:00:00Z' },
      }),
      { ready: false, status: 'Terminating', message: null },
    ],
    ['just created (no status yet)', pod({ phase: 'Pending' }, { spec: {} }), { ready: false, status: 'Pending', message: null }],
  ];

  for (const [what, p, want] of cases) {
    it(what, () => {
      expect(podState(p)).toMatchObject(want);
    });
  }

  it('names the pod, its node and the status with the first line of the message', () => {
    expect(describeNotReady(podState(cases[0][1]))).toBe(
      'kube-multus-ds-x7k2p on node k3d-lab-agent-0: Init:CrashLoopBackOff (back-off 40s restarting failed container=install-multus-binary)',
    );
    expect(describeNotReady(podState(cases[9][1]))).toMatch(/^kube-multus-ds-x7k2p \(not scheduled\): Pending \(0\/3 nodes are available/);
  });
});
