// The CNI result's internal (1.1.0) form, shared by the conversions of every version (result.ts, result-020.ts).
export interface CniInterface {
  name: string;
  mac?: string;
  mtu?: number;
  sandbox?: string;
  socketPath?: string;
  pciID?: string;
}

export interface CniIp {
  /** CIDR: the address with its prefix length. */
  address: string;
  gateway?: string;
  /** Index into interfaces. */
  interface?: number;
}

export interface CniRoute {
  dst: string;
  gw?: string;
  mtu?: number;
  advmss?: number;
  priority?: number;
  table?: number;
  scope?: number;
}

export interface CniDns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

/** The internal (1.1.0) form; cniVersion says what it was read from, and is rewritten on output. */
export interface CniResult {
  cniVersion: string;
  interfaces?: CniInterface[];
  ips?: CniIp[];
  routes?: CniRoute[];
  dns?: CniDns;
}
