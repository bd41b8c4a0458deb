// IPAM delegation: the plugin named in ipam.type, run from CNI_PATH for each verb, spoken to in the newest
// CNI version both of us have (Debian's plugins stop at 1.0.0 while we speak 1.1.0).
import { findPlugin, startDelegate, type DelegateCall, type DelegateOutput } from './delegate';
import type { Env } from '../config';
import { CNI_ERR, CniError } from './errors';
import type { Json } from './fields';
import { log } from './log';
import { pluginVersions } from './plugin-versions';
import type { VerbContext } from './verb';
import { formatResult, parseResult, ResultFormatError, type CniResult } from './result';
import { compareVersions, negotiateVersion, SUPPORTED_VERSIONS, type CniVersion } from './versions';

export interface IpamTarget {
  /** The network config as the runtime gave it (the IPAM plugin reads its ipam section, name, args, …). */
  raw: Json;
  type: string;
  cniVersion: string;
  cniPath: readonly string[];
  /** Where the plugin's supported versions are remembered. */
  stateDir: string;
  /** How long the plugin may run, or why SRIOVCTL_IPAM_TIMEOUT is unusable (CniEnv.ipamTimeoutMs; default 120 s). */
  timeoutMs?: number | CniError;
  /** The environment the plugin inherits (CniEnv.delegateEnv). Absent: none. */
  inherit?: Env;
}

/** See Ipam.blindToInterface. */
const INTERFACE_BLIND_TYPES: ReadonlySet<string> = new Set(['host-local', 'static']);

interface Resolved {
  path: string;
  label: string;
  /** The version we speak with it. */
  version: CniVersion;
}

/** The IPAM plugin this call's config names, or null when it names none. */
export function ipamOfCall({ env, conf, config }: VerbContext): Ipam | null {
  if (!conf.ipam) return null;
  return new Ipam({ raw: conf.raw, type: conf.ipam.type, cniVersion: conf.cniVersion, cniPath: env.path, stateDir: config.stateDir, timeoutMs: env.ipamTimeoutMs, inherit: env.delegateEnv });
}

export class Ipam {
  private resolved: Resolved | null = null;

  constructor(private readonly target: IpamTarget) {}

  /** Find the plugin and agree on a version now, so a missing or incompatible plugin fails before any change. */
  prepare(): void {
    this.plugin();
  }

  /** Allocate: the result in our internal (1.1.0) form, ips without an interface index yet. Runs on a pool thread. */
  async add(): Promise<CniResult> {
    const p = this.plugin();
    const { stdout } = await this.start('ADD', null);
    let raw: unknown;
    try {
      raw = JSON.parse(stdout);
    } catch {
      throw new CniError(CNI_ERR.IPAM_BAD_RESULT, `${p.label} ADD: result is not JSON`, stdout.slice(0, 300));
    }
    const version = typeof (raw as { cniVersion?: unknown })?.cniVersion === 'string' ? (raw as { cniVersion: string }).cniVersion : p.version;
    if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version)) {
      throw new CniError(CNI_ERR.IPAM_BAD_RESULT, `${p.label} ADD: result version ${version} is not one we read`, stdout.slice(0, 300));
    }
    try {
      return parseResult(raw, version);
    } catch (err) {
      if (err instanceof ResultFormatError) throw new CniError(CNI_ERR.IPAM_BAD_RESULT, `${p.label} ADD: ${err.message}`, stdout.slice(0, 300));
      throw err;
    }
  }

  /** Release; `env` overrides (GC releases attachments other than the current one). Runs on a pool thread. */
  async del(env?: Record<string, string>, prevResult?: CniResult | null): Promise<void> {
    await this.start('DEL', prevResult ?? null, env);
  }

  /**
   * True for a plugin whose ADD and DEL never look at the pod's interface, so they may run while the NIC moves:
   * host-local keeps its allocations in files, static only reads its config. Any other (dhcp talks on the
   * interface) runs with the NIC in the pod: after the move on ADD, before the move back on DEL.
   */
  get blindToInterface(): boolean {
    return INTERFACE_BLIND_TYPES.has(this.target.type);
  }

  /** Passes the IPAM plugin's CHECK error on; skipped for a plugin too old to have CHECK. */
  async check(prevResult: CniResult | null): Promise<void> {
    if (!this.speaks('0.4.0')) return;
    await this.start('CHECK', prevResult);
  }

  /** STATUS and GC exist from 1.1.0 on; a plugin without them has nothing to report or collect. */
  async status(): Promise<void> {
    if (!this.speaks('1.1.0')) return;
    await this.start('STATUS', null);
  }

  async gc(): Promise<void> {
    if (!this.speaks('1.1.0')) return;
    await this.start('GC', null);
  }

  get label(): string {
    return `ipam ${this.target.type}`;
  }

  private speaks(version: string): boolean {
    return compareVersions(this.plugin().version, version) >= 0;
  }

  private plugin(): Resolved {
    if (this.resolved) return this.resolved;
    const path = findPlugin(this.target.type, this.target.cniPath);
    const label = this.label;
    const theirs = pluginVersions(this.target.stateDir, path, label, this.target.timeoutMs, this.target.inherit);
    const version = negotiateVersion(this.target.cniVersion, theirs);
    if (!version) {
      throw new CniError(
        CNI_ERR.INCOMPATIBLE_VERSION,
        `${label} speaks no CNI version compatible with ${this.target.cniVersion}`,
        `${label} supports ${JSON.stringify(theirs)}`,
      );
    }
    if (version !== this.target.cniVersion) log.debug(`${label}: speaking CNI ${version} (network is ${this.target.cniVersion})`);
    this.resolved = { path, label, version };
    return this.resolved;
  }

  private async start(command: string, prevResult: CniResult | null, env?: Record<string, string>): Promise<DelegateOutput> {
    const out = await startDelegate(this.delegateCall(command, prevResult, env));
    this.logStderr(command, out);
    return out;
  }

  private delegateCall(command: string, prevResult: CniResult | null, env?: Record<string, string>): DelegateCall {
    const p = this.plugin();
    const stdin: Json = { ...this.target.raw, cniVersion: p.version };
    if (prevResult) stdin.prevResult = formatResult(prevResult, p.version);
    else delete stdin.prevResult;
    return { path: p.path, label: p.label, command, env, stdin: JSON.stringify(stdin), timeoutMs: this.target.timeoutMs, inherit: this.target.inherit };
  }

  private logStderr(command: string, out: DelegateOutput): void {
    if (out.stderr.trim()) log.info(`${this.label} ${command} stderr: ${out.stderr.trim()}`);
  }
}
