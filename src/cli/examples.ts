// A few examples under each command's help, as kubectl shows them: the commands a person types most, each
// checked by a test against the command's own options (test/integration/cli-examples.test.ts).
import type { Command } from 'commander';

/** Examples by command path (the words after `sriovctl`), each a command line and what it does. */
export const EXAMPLES: Readonly<Record<string, readonly [string, string][]>> = {
  '': [
    ['sriovctl attach enp3s0f1 node1 --vfs 4', 'lend a PF to a namespace and make 4 VFs on it'],
    ['sriovctl status', 'every lent NIC, where it is and for how long'],
    ['sriovctl detach enp3s0f1', 'give it back'],
    ['sriovctl cluster up --agents 2', 'a local test cluster with one PF per agent'],
  ],
  attach: [
    ['sriovctl attach enp3s0f1 node1', 'like `ip link set enp3s0f1 netns node1`, recorded first'],
    ['sriovctl attach 0000:03:00.1 pid:4242 --as net1', "by PCI address, into a process's namespace, renamed"],
    ['sriovctl attach enp3s0f1 docker:kind-worker --vfs 4 --driver vfio-pci', 'into a container, then 4 VFs bound to vfio-pci'],
  ],
  detach: [
    ['sriovctl detach enp3s0f1', 'give one NIC back where it came from'],
    ['sriovctl detach --all --target node1', 'everything lent to node1'],
  ],
  status: [
    ['sriovctl status', 'a table of lent NICs'],
    ['sriovctl status --json', 'the same for scripts'],
  ],
  nics: [
    ['sriovctl nics', "every SR-IOV PF and VF: driver, VF count, link, the uplink, where each is lent"],
    ['sriovctl nics --json', 'the same for scripts'],
  ],
  vfs: [
    ['sriovctl vfs enp3s0f1', "the PF's VFs"],
    ['sriovctl vfs enp3s0f1 8 --driver vfio-pci', 'like `echo 8 > sriov_numvfs`, then bind them to vfio-pci'],
  ],
  cleanup: [
    ['sriovctl cleanup --dry-run', 'what would be finished and given back'],
    ['sriovctl cleanup', 'finish it (safe to repeat)'],
  ],
  'install-cni': [['sriovctl install-cni --to /opt/cni/bin', 'install sriovctl-cni for the kubelet']],
  daemon: [
    ['sriovctl daemon', 'serve CNI calls on /run/sriovctl/cni.sock'],
    ['sriovctl daemon --probe', 'exit 0 when a daemon answers'],
  ],
  cluster: [
    ['sriovctl cluster up --agents 2 --vfs 4', 'a local cluster: 1 server, 2 agents, 4 VFs each'],
    ['sriovctl cluster list', 'the clusters this machine knows'],
    ['sriovctl cluster down --name sriov', 'give every NIC back and delete it'],
  ],
  'cluster up': [
    ['sriovctl cluster up --agents 2 --vfs 4', 'local: network namespaces as nodes'],
    ['sriovctl cluster up --provider kind --name ci --pf enp3s0f0 enp3s0f1', 'kind, on the PFs named'],
    ['sriovctl cluster up -f cluster.yaml', 'as a cluster file describes it'],
  ],
  'cluster down': [
    ['sriovctl cluster down', 'the one cluster there is (refused when there are several)'],
    ['sriovctl cluster down --name ci --json', 'a named one, with a JSON summary'],
  ],
  'cluster status': [['sriovctl cluster status --name ci', 'its nodes and the NICs lent to it']],
  'cluster list': [
    ['sriovctl cluster list', 'name, provider, nodes, NICs lent, age'],
    ['sriovctl cluster list --json', 'the same for scripts'],
  ],
  demo: [['sriovctl demo', 'the local lab end to end on simulated NICs (npm start)']],
  completion: [
    ['source <(sriovctl completion bash)', 'complete sriovctl in this bash'],
    ['sriovctl completion fish > ~/.config/fish/completions/sriovctl.fish', 'for fish'],
  ],
};

/** Adds each command's examples under its help. */
export function addExamples(cmd: Command, path: string[] = []): void {
  const examples = EXAMPLES[path.join(' ')];
  if (examples) {
    cmd.addHelpText('after', `\nExamples:\n${examples.map(([line, what]) => `  # ${what}\n  ${line}\n`).join('\n')}`);
  }
  for (const sub of cmd.commands) addExamples(sub, [...path, sub.name()]);
}
