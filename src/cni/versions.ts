// CNI spec versions: which we speak, how they compare, which verbs each allows.
import { packageVersion } from '../package/version';
import { CNI_ERR, CniError } from './errors';

/** Every version whose results we can produce (results are built in 1.1.0 form and converted down). */
export const SUPPORTED_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export type CniVersion = (typeof SUPPORTED_VERSIONS)[number];
export const LATEST_VERSION: CniVersion = '1.1.0';

/** The spec's rule for a config without cniVersion. */
export const DEFAULT_CONFIG_VERSION = '0.1.0';

const VERSION_RE = /^(\d+)\.(\d+)\.(\d+)$/;

export function isVersionString(v: unknown): v is string {
  return typeof v === 'string' && VERSION_RE.test(v);
}

/** Negative, zero or positive, like a sort comparator. Both must be valid version strings. */
export function compareVersions(a: string, b: string): number {
  const pa = VERSION_RE.exec(a);
  const pb = VERSION_RE.exec(b);
  if (!pa || !pb) throw new TypeError(`not a CNI version: ${pa ? b : a}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  return 0;
}

export function isSupported(v: string): v is CniVersion {
  return (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/** The config's version, checked against ours (code 1 when we cannot speak it). */
export function requireSupported(v: string): CniVersion {
  if (!isSupported(v)) {
    throw new CniError(
      CNI_ERR.INCOMPATIBLE_VERSION,
      'incompatible CNI versions',
      `config is "${v}", plugin supports ${JSON.stringify(SUPPORTED_VERSIONS)}`,
    );
  }
  return v;
}

/** The oldest version that has each verb. */
const VERB_SINCE: Record<string, string> = { CHECK: '0.4.0', STATUS: '1.1.0', GC: '1.1.0' };

export function requireVerbAllowed(verb: string, v: string): void {
  const since = VERB_SINCE[verb];
  if (since && compareVersions(v, since) < 0) {
    throw new CniError(CNI_ERR.INCOMPATIBLE_VERSION, `config version does not allow ${verb}`, `${verb} needs ${since} or later, config is ${v}`);
  }
}

/**
 * The version to speak with a delegate (IPAM plugin) that supports `theirs`: ours when they have it, else
 * the newest of theirs that is older than ours and one we can read results of.
 * Null when there is none.
 */
export function negotiateVersion(ours: string, theirs: readonly string[]): CniVersion | null {
  if (theirs.includes(ours) && isSupported(ours)) return ours;
  const usable = theirs
    .filter((v) => isVersionString(v) && isSupported(v) && compareVersions(v, ours) <= 0)
    .sort(compareVersions);
  return (usable[usable.length - 1] as CniVersion | undefined) ?? null;
}

/** The VERSION verb's answer: like libcni's plugins, in our own newest version (stdin is not needed). */
export function versionReply(): { cniVersion: string; supportedVersions: string[] } {
  return { cniVersion: LATEST_VERSION, supportedVersions: [...SUPPORTED_VERSIONS] };
}

/**
 * What the plugin says when a person runs it (no CNI_COMMAND: `sriovctl-cni --version`, `--help`, or bare): the
 * two lines the Go plugins' skel writes to stderr, in their shape, exit 0.
 */
export function aboutPlugin(): string {
  return `CNI sriovctl-cni plugin version ${packageVersion()}\nCNI protocol versions supported: ${SUPPORTED_VERSIONS.join(', ')}\n`;
}
