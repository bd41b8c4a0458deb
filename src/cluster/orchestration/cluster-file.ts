// `cluster up -f cluster.yaml`: everything `up` takes, in one validated file, plus a pass-through of the
// provider tool's own cluster config (k3d `k3d.io/v1alpha5` Simple, kind `kind.x-k8s.io/v1alpha4` Cluster),
// which sriovctl merges under what it needs. Strict: an unknown key, a wrong type or a key sriovctl owns is an
// error naming the key's path (`cluster.yaml: spec.agnets: unknown key`). Flags override the file (src/cli).
import { pluginAliasProblem } from '../../install/installed-names';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SysError } from '../../errors';
import { CONTAINER_RUNTIMES, type ContainerRuntime } from '../tools/container-runtime';
import { PROVIDER_NAMES, assertClusterName, type ProviderName } from '../types';
import { yaml } from '../kubernetes/yaml';

export const CLUSTER_FILE_API_VERSION = 'sriovctl/v1alpha1';

/** What the file sets; absent = not set (the flag or the default decides). Paths are absolute. */
export interface ClusterFile {
  name?: string;
  provider?: ProviderName;
  runtime?: ContainerRuntime;
  agents?: number;
  vfs?: number;
  pf?: string[];
  exclude?: string[];
  driver?: string;
  image?: string;
  reservedCpus?: string;
  primaryCni?: string;
  imagesDir?: string;
  airgap?: boolean;
  /** spec.sriovCniName: sriovctl-cni installed under this name too (sriov-cni's `sriov`), as --sriov-cni-name. */
  sriovCniName?: string;
  /** The tools' own configs, by provider. */
  providerConfig: { k3d?: Record<string, unknown>; kind?: Record<string, unknown> };
}

/** The pass-through configs: the version sriovctl writes, the keys it takes as they are, the keys it sets itself. */
const PASS_THROUGH = {
  k3d: {
    apiVersion: 'k3d.io/v1alpha5',
    kind: 'Simple',
    keys: ['kubeAPI', 'network', 'subnet', 'token', 'volumes', 'ports', 'env', 'files', 'registries', 'hostAliases', 'options'],
    owned: { metadata: 'metadata.name', servers: 'always 1', agents: 'spec.agents', image: 'spec.nodeImage' } as Record<string, string>,
  },
  kind: {
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    kind: 'Cluster',
    keys: [
      'networking', 'featureGates', 'runtimeConfig', 'kubeadmConfigPatches', 'kubeadmConfigPatchesJSON6902',
      'containerdConfigPatches', 'containerdConfigPatchesJSON6902',
    ],
    owned: { name: 'metadata.name', nodes: 'spec.agents and spec.nodeImage' } as Record<string, string>,
  },
} as const;

type Obj = Record<string, unknown>;

class Reader {
  constructor(
    private readonly file: string,
    private readonly base: string,
  ) {}

  fail(path: string, why: string): never {
    throw new SysError(`${this.file}: ${path ? `${path}: ` : ''}${why}`, { code: 'INVALID', op: 'cluster file' });
  }

  object(v: unknown, path: string): Obj {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) this.fail(path, `must be a mapping, not ${describe(v)}`);
    return v as Obj;
  }

  keys(o: Obj, path: string, allowed: readonly string[]): void {
    for (const k of Object.keys(o)) if (!allowed.includes(k)) this.fail(join(path, k), 'unknown key');
  }

  string(v: unknown, path: string): string {
    if (typeof v !== 'string' || v.length === 0) this.fail(path, `must be a non-empty string, not ${describe(v)}`);
    return v;
  }

  oneOf<T extends string>(v: unknown, path: string, choices: readonly T[]): T {
    if (typeof v !== 'string' || !choices.includes(v as T)) this.fail(path, `must be one of ${choices.join(', ')}, not ${describe(v)}`);
    return v as T;
  }

  count(v: unknown, path: string, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.fail(path, `must be an integer from ${min} to ${max}, not ${describe(v)}`);
    return v;
  }

  strings(v: unknown, path: string): string[] {
    if (!Array.isArray(v)) this.fail(path, `must be a list, not ${describe(v)}`);
    return v.map((x, i) => this.string(x, `${path}[${i}]`));
  }

  boolean(v: unknown, path: string): boolean {
    if (typeof v !== 'boolean') this.fail(path, `must be true or false, not ${describe(v)}`);
    return v;
  }

  /** A path in the file is relative to the file's directory; a URL stays as it is. */
  location(v: unknown, path: string, urlAllowed = false): string {
    const s = this.string(v, path);
    return urlAllowed && /^https?:\/\//.test(s) ? s : resolve(this.base, s);
  }

  passThrough(v: unknown, path: string, which: keyof typeof PASS_THROUGH): Obj {
    const rule = PASS_THROUGH[which];
    const o = this.object(v, path);
    if (o.apiVersion !== rule.apiVersion) this.fail(join(path, 'apiVersion'), `must be ${rule.apiVersion}, not ${describe(o.apiVersion)}`);
    if (o.kind !== rule.kind) this.fail(join(path, 'kind'), `must be ${rule.kind}, not ${describe(o.kind)}`);
    for (const k of Object.keys(o)) {
      if (k === 'apiVersion' || k === 'kind') continue;
      if (k in rule.owned) this.fail(join(path, k), `set by sriovctl (from ${rule.owned[k]})`);
      if (!(rule.keys as readonly string[]).includes(k)) this.fail(join(path, k), `unknown key (${rule.apiVersion} ${rule.kind} takes ${rule.keys.join(', ')})`);
    }
    return o;
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return JSON.stringify(v);
}

/** Reads and validates a cluster file; `shown` is how errors name it (the path as the user gave it). */
export function readClusterFile(file: string, shown = file): ClusterFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SysError(`${shown}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { code: 'NOT_FOUND', op: 'cluster file' });
  }
  return parseClusterFile(text, shown, dirname(resolve(file)));
}

export function parseClusterFile(text: string, shown: string, baseDir: string): ClusterFile {
  const r = new Reader(shown, baseDir);
  const docs = yaml().parseAllDocuments(text);
  if (!Array.isArray(docs) || docs.length !== 1) r.fail('', 'must hold exactly one YAML document');
  const [doc] = docs;
  if (doc.errors.length > 0) r.fail('', `not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  const top = r.object(doc.toJS(), '');
  r.keys(top, '', ['apiVersion', 'kind', 'metadata', 'spec']);
  if (top.apiVersion !== CLUSTER_FILE_API_VERSION) r.fail('apiVersion', `must be ${CLUSTER_FILE_API_VERSION}, not ${describe(top.apiVersion)}`);
  if (top.kind !== 'Cluster') r.fail('kind', `must be Cluster, not ${describe(top.kind)}`);

  const out: ClusterFile = { providerConfig: {} };
  if (top.metadata !== undefined) {
    const meta = r.object(top.metadata, 'metadata');
    r.keys(meta, 'metadata', ['name']);
    if (meta.name !== undefined) {
      out.name = r.string(meta.name, 'metadata.name');
      try {
        assertClusterName(out.name);
      } catch (err) {
        r.fail('metadata.name', (err as Error).message);
      }
    }
  }
  const spec = top.spec === undefined ? {} : r.object(top.spec, 'spec');
  r.keys(spec, 'spec', ['provider', 'runtime', 'agents', 'vfs', 'pfs', 'exclude', 'driver', 'nodeImage', 'reservedCpus', 'primaryCni', 'images', 'sriovCniName', 'k3d', 'kind']);
  const at = (k: string) => `spec.${k}`;
  if (spec.provider !== undefined) out.provider = r.oneOf(spec.provider, at('provider'), PROVIDER_NAMES);
  if (spec.runtime !== undefined) out.runtime = r.oneOf(spec.runtime, at('runtime'), CONTAINER_RUNTIMES);
  if (spec.agents !== undefined) out.agents = r.count(spec.agents, at('agents'), 1, 64);
  if (spec.vfs !== undefined) out.vfs = r.count(spec.vfs, at('vfs'), 0, 256);
  if (spec.pfs !== undefined) out.pf = r.strings(spec.pfs, at('pfs'));
  if (spec.exclude !== undefined) out.exclude = r.strings(spec.exclude, at('exclude'));
  if (spec.driver !== undefined) out.driver = r.string(spec.driver, at('driver'));
  if (spec.nodeImage !== undefined) out.image = r.string(spec.nodeImage, at('nodeImage'));
  if (spec.reservedCpus !== undefined) out.reservedCpus = r.string(typeof spec.reservedCpus === 'number' ? String(spec.reservedCpus) : spec.reservedCpus, at('reservedCpus'));
  if (spec.primaryCni !== undefined) out.primaryCni = r.location(spec.primaryCni, at('primaryCni'), true);
  if (spec.sriovCniName !== undefined) {
    out.sriovCniName = r.string(spec.sriovCniName, at('sriovCniName'));
    const problem = pluginAliasProblem(out.sriovCniName);
    if (problem) r.fail(at('sriovCniName'), problem);
  }
  if (spec.images !== undefined) {
    const images = r.object(spec.images, at('images'));
    r.keys(images, at('images'), ['archives', 'airgap']);
    if (images.archives !== undefined) out.imagesDir = r.location(images.archives, at('images.archives'));
    if (images.airgap !== undefined) out.airgap = r.boolean(images.airgap, at('images.airgap'));
  }
  for (const which of ['k3d', 'kind'] as const) {
    if (spec[which] === undefined) continue;
    if (out.provider !== undefined && out.provider !== which) r.fail(at(which), `is for provider ${which}, spec.provider is ${out.provider}`);
    out.providerConfig[which] = r.passThrough(spec[which], at(which), which);
  }
  return out;
}
