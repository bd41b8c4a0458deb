// Types of nic-state.js (plain CommonJS, shared with the kernel lab).

export interface NicCapture {
  link: unknown;
  /** By 'address/prefix' (an IPv4 secondary says so in its flags). */
  addresses: Record<string, unknown>;
  /** Every route of both families, in every table, whose device or any nexthop's is the NIC, by 'type dst table metric'. */
  routes: Record<string, unknown>;
  rules: unknown[];
  nexthops: unknown[];
  /** net.ipv4.conf.<nic>.*, net.ipv6.conf.<nic>.*, net.ipv4.neigh.<nic>.*, net.ipv6.neigh.<nic>.* */
  sysctls: Record<string, string>;
  /** ethtool -k, where the driver has features. */
  features: unknown;
}

export declare const KERNEL_OWNED: ReadonlySet<string>;
export declare function settledAddresses(netns: string | null, nic: string): unknown[] | null;
export declare function readNic(netns: string | null, nic: string, addrs: unknown[]): NicCapture;
export declare function onlyNic(capture: NicCapture, nic: string): NicCapture;
export declare function diffCaptures(before: NicCapture, after: NicCapture): string[];
