// The node's stand-in NICs (veths with a distinctive MAC and MTU and an address at home) lent whole to pods through
// NetworkAttachmentDefinitions, and what every scenario checks of them: in the pod as Multus names it (net1) with
// host-local's address and one ledger record naming the sandbox; home as it was (name, MAC, MTU, up/down, address)
// with no record of it in the node's ledger.
import { afterEach, beforeEach, expect } from 'vitest';
import { ip, ipJson, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import type { Cluster } from './cluster';
import { nad, pod, podPath, podSandbox, waitGone, waitRunning } from './pods';

/** Global addresses of `dev` (in `netns`, else at home), as iproute2 reads them. */
export function addresses(dev: string, netns?: string): string[] {
  const args = netns ? ['-n', netns] : [];
  return ipJson<any[]>(...args, 'addr', 'show', 'dev', dev)[0]
    .addr_info.filter((a: any) => a.scope === 'global')
    .map((a: any) => `${a.local}/${a.prefixlen}`);
}

/** The pod a NIC is lent to: the API's object once Running, and its sandbox on the node. */
export interface LentTo {
  pod: any;
  sandbox: { id: string; netns: string };
}

export class NodeNic {
  readonly home: NicState;
  /** The address the NIC has at home (a /32 of TEST-NET-2 named by the test's prefix and the NIC's index). */
  readonly homeAddress: string;

  constructor(
    private readonly s: Scratch,
    readonly index: number,
  ) {
    this.home = standInNic(s, `n${index}`);
    this.homeAddress = `198.51.100.${((parseInt(s.prefix.slice(1), 16) + index) % 250) + 1}/32`;
    ip('addr', 'add', this.homeAddress, 'dev', this.home.name);
  }

  get name(): string {
    return this.home.name;
  }

  /** host-local's subnet for this NIC's attachments. */
  get subnet(): string {
    return `10.123.${this.index}.0/24`;
  }

  /** A NAD of `type` lending this NIC whole, host-local on a subnet of its own. */
  nad(type = 'sriovctl-cni'): any {
    return nad({
      cniVersion: '1.0.0',
      name: this.nadName(type),
      type,
      device: this.name,
      ipam: { type: 'host-local', ranges: [[{ subnet: this.subnet }]] },
    });
  }

  nadName(type = 'sriovctl-cni'): string {
    return `${this.s.prefix}-${this.index}-${type}`;
  }

  /**
   * Create pod `name` attached to `nadName` and wait until it runs: the NIC is then in its sandbox as net1 (same MAC
   * and MTU) with an address of the NIC's subnet, and the ledger's one record of it names the sandbox and net1.
   */
  async lendTo(c: Cluster, name: string, nadName = this.nadName()): Promise<LentTo> {
    await c.api.create(pod(c, name, nadName));
    return this.expectLent(c, await waitRunning(c, name));
  }

  /** The running pod `p` holds the NIC as net1 (see lendTo). */
  async expectLent(c: Cluster, p: any): Promise<LentTo> {
    const sandbox = await podSandbox(c, p.metadata.uid);
    expect(nicState(this.name)).toBeNull();
    expect(nicState('net1', sandbox.netns)).toMatchObject({ name: 'net1', mac: this.home.mac, mtu: this.home.mtu });
    const ips = addresses('net1', sandbox.netns);
    expect(ips).toHaveLength(1);
    expect(ips[0].startsWith(this.subnet.replace(/0\/24$/, ''))).toBe(true);
    expect(c.recordsOf(this.home.mac).map((r) => r.owner)).toEqual([`cni:${sandbox.id}/net1`]);
    return { pod: p, sandbox };
  }

  /** Delete pod `name` (gracefully, or with `grace` seconds: 0 is `--grace-period=0 --force`), then expectHome. */
  async deleteAndExpectHome(c: Cluster, name: string, grace?: number): Promise<void> {
    await c.api.delete(podPath(name), grace);
    await waitGone(c, name);
    await this.waitHome(c);
  }

  /** Wait until the NIC is home and its record gone (kubelet tears sandboxes down on its own schedule), then expectHome. */
  async waitHome(c: Cluster): Promise<void> {
    await c.api.waitFor(`${this.name} home and its record gone`, async () => (nicState(this.name) && c.recordsOf(this.home.mac).length === 0 ? true : undefined));
    this.expectHome(c);
  }

  /** The NIC is home as it was (name, MAC, MTU, up/down, address) and the node's ledger holds nothing of it. */
  expectHome(c: Cluster): void {
    expect(nicState(this.name)).toEqual(this.home);
    expect(addresses(this.name)).toEqual([this.homeAddress]);
    expect(c.recordsOf(this.home.mac)).toEqual([]);
  }
}

/** Per test: a Scratch and `count` stand-in NICs, each with its NAD of type sriovctl-cni created; removed after it. */
export function useNodeNics(cluster: () => Cluster, count: number): () => { s: Scratch; nics: NodeNic[] } {
  let world: { s: Scratch; nics: NodeNic[] };
  beforeEach(async () => {
    const s = new Scratch();
    world = { s, nics: [] };
    for (let i = 0; i < count; i++) world.nics.push(new NodeNic(s, i));
    for (const n of world.nics) await cluster().api.create(n.nad());
  });
  afterEach(() => {
    world.s.cleanup();
  });
  return () => world;
}
