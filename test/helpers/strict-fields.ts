// Strict field validation the way the API server does it (`kubectl apply --validate=strict`, the default since
// kubectl 1.27): a field that the schema of a known object type does not declare is an error naming its path,
// while free-form maps (labels, annotations, ConfigMap data, resource lists, nodeSelector, …) and
// preserve-unknown-fields objects take any key. The schemas themselves say which is which:
// - a raw JSON schema (a CRD's openAPIV3Schema, a tool's config schema) is made strict by `strictSchema`;
// - kubernetes-models ships its schemas compiled (ajv standalone code), which allow unknown fields. What a compiled
//   validator declares shows in what it reads: it reads every property its schema declares by name (present or
//   not), enumerates the keys of a map, and reads nothing of a free-form object. `kubernetesUnknownFields` runs it
//   over a recording copy of the object and reports the keys of named-read objects that it never read.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';

type Json = Record<string, unknown>;
type Path = (string | number)[];

/** A field path as the API server prints it: `spec.template.spec.containers[0].volumeMount`. */
export function fieldPath(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** A JSON pointer (`/spec/containers/0/name`, as ajv's instancePath) as path segments. */
export function pointerPath(pointer: string): Path {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs'];
const SUBSCHEMAS = ['items', 'additionalItems', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'];

/**
 * A copy of a JSON schema where every object schema that declares `properties` and says nothing of other keys
 * (no `additionalProperties`, no `x-kubernetes-preserve-unknown-fields: true`) refuses other keys:
 * `additionalProperties: false` (which spares keys its `patternProperties` match). The branches of
 * `allOf`/`anyOf`/`oneOf` stay open at their top (each sees only its own properties: closing one would refuse the
 * others' keys); what is inside them is made strict.
 */
export function strictSchema<T>(schema: T): T {
  return close(schema, true) as T;
}

function close(schema: unknown, closable: boolean): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s = schema as Json;
  const out: Json = { ...s };
  for (const k of SUBSCHEMAS) if (k in s) out[k] = Array.isArray(s[k]) ? (s[k] as unknown[]).map((x) => close(x, true)) : close(s[k], true);
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(s[k])) out[k] = (s[k] as unknown[]).map((x) => close(x, false));
  for (const k of SUBSCHEMA_MAPS) {
    if (s[k] && typeof s[k] === 'object') out[k] = Object.fromEntries(Object.entries(s[k] as Json).map(([n, x]) => [n, close(x, true)]));
  }
  const open = 'additionalProperties' in s || s['x-kubernetes-preserve-unknown-fields'] === true;
  if (closable && s.properties && typeof s.properties === 'object' && !open) out.additionalProperties = false;
  return out;
}

interface Recorded {
  path: Path;
  keys: string[];
  read: Set<string>;
  enumerated: boolean;
}

/** A deep copy of `value` whose objects record what is read of them (into `log`); arrays stay plain arrays. */
function recording(value: unknown, path: Path, log: Recorded[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => recording(v, [...path, i], log));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Json);
  const node: Recorded = { path, keys: entries.map(([k]) => k), read: new Set(), enumerated: false };
  log.push(node);
  const copy = Object.fromEntries(entries.map(([k, v]) => [k, recording(v, [...path, k], log)]));
  const note = (k: string | symbol) => {
    if (typeof k === 'string') node.read.add(k);
  };
  return new Proxy(copy, {
    get: (t, k, r) => (note(k), Reflect.get(t, k, r)),
    has: (t, k) => (note(k), Reflect.has(t, k)),
    getOwnPropertyDescriptor: (t, k) => (note(k), Reflect.getOwnPropertyDescriptor(t, k)),
    ownKeys: (t) => ((node.enumerated = true), Reflect.ownKeys(t)),
  });
}

/** A compiled validator as kubernetes-models has them: ajv standalone code, `errors` set after a failed call. */
type CompiledValidate = ((data: unknown) => boolean) & { errors?: unknown };

/** The names a validator reads of an object, sorted and joined: which schema it checked the object against. */
function signature(read: Iterable<string>): string {
  return [...read].sort().join('\n');
}

/**
 * What each kubernetes-models schema declares, by the signature of what its compiled validator reads. The
 * validators read every declared property but a few: the generator drops the keywords `description` and
 * `x-kubernetes-*` from the schemas, and with them properties of those names (JSONSchemaProps.description,
 * …). The TypeScript interfaces generated from the same OpenAPI keep every property: they complete the list.
 * Schemas whose validators read the same names (DaemonSet and Deployment: apiVersion, kind, metadata, spec,
 * status) share an entry: the union of their interfaces, which differ only for JSONSchemaProps v1 and v1beta1.
 */
let declaredBySignature: Map<string, Set<string>> | undefined;

/** kubernetes-models and its own apimachinery (ObjectMeta, LabelSelector, …), as kubernetes-models resolves it. */
const fromModels = createRequire(createRequire(__filename).resolve('kubernetes-models'));

function kubernetesDeclared(): Map<string, Set<string>> {
  if (declaredBySignature) return declaredBySignature;
  const packages = ['kubernetes-models', '@kubernetes-models/apimachinery'].map((p) => dirname(fromModels.resolve(p)));
  const interfaceProps = new Map<string, string[]>();
  for (const dir of packages) for (const file of declarationFiles(dir)) readInterfaces(file, interfaceProps);
  const map = new Map<string, Set<string>>();
  for (const dir of packages) {
    for (const file of readdirSync(join(dir, '_schemas')).filter((f) => f.endsWith('.js'))) {
      const name = file.slice(0, -'.js'.length);
      const { validate } = fromModels(join(dir, '_schemas', file)) as { validate: CompiledValidate };
      const log: Recorded[] = [];
      validate(recording({}, [], log));
      const read = log[0].read;
      if (read.size === 0) continue; // free-form (RawExtension, JSON) or not an object (Quantity, Time, …)
      const key = signature(read);
      const props = interfaceProps.get(name) ?? [];
      // the premise, checked: a validator reads of an object only the properties its schema declares
      const undeclared = props.length === 0 ? [] : [...read].filter((n) => !props.includes(n));
      if (undeclared.length > 0) throw new Error(`${name}'s validator reads ${undeclared.join(', ')}, which its interface does not declare`);
      const declared = map.get(key) ?? new Set<string>();
      for (const n of [...read, ...props]) declared.add(n);
      map.set(key, declared);
    }
  }
  return (declaredBySignature = map);
}

function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return e.name === '_schemas' || e.name === 'node_modules' ? [] : declarationFiles(join(dir, e.name));
    return e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [];
  });
}

/** Records the properties of every interface a file exports under its schema's name (`IIoK8sApiAppsV1DaemonSet`). */
function readInterfaces(file: string, into: Map<string, string[]>): void {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const props = new Map<string, string[]>();
  const aliases: [string, string][] = [];
  for (const st of source.statements) {
    if (ts.isInterfaceDeclaration(st)) {
      props.set(st.name.text, st.members.flatMap((m) => (m.name && (ts.isStringLiteral(m.name) || ts.isIdentifier(m.name)) ? [m.name.text] : [])));
    } else if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const el of st.exportClause.elements) if (el.propertyName) aliases.push([el.propertyName.text, el.name.text]);
    }
  }
  for (const [local, exported] of aliases) {
    const p = props.get(local);
    if (p && exported.startsWith('IIoK8s')) into.set(exported.slice(1), p);
  }
}

/**
 * Runs a kubernetes-models validator (one that throws, like `Model.prototype.validate`) over `obj`; returns its
 * error message (null when valid) and the paths of the fields no schema on their way declares.
 */
export function kubernetesUnknownFields(obj: unknown, validate: (data: unknown) => void): { error: string | null; unknown: Path[] } {
  const log: Recorded[] = [];
  let error: string | null = null;
  try {
    validate(recording(obj, [], log));
  } catch (err) {
    error = (err as Error).message;
  }
  const declared = kubernetesDeclared();
  const unknown: Path[] = [];
  for (const node of log) {
    if (node.read.size === 0 || node.enumerated) continue; // free-form: nothing declared, or a map
    const names = declared.get(signature(node.read));
    if (!names) throw new Error(`no kubernetes-models schema reads exactly {${[...node.read].join(', ')}} (at ${fieldPath(node.path) || 'the top'})`);
    for (const k of node.keys) if (!names.has(k)) unknown.push([...node.path, k]);
  }
  return { error, unknown };
}

export function unknownField(path: Path): string {
  return `unknown field "${fieldPath(path)}"`;
}

/**
 * The problems of one object for a kubernetes-models validator (a throwing one, like `Model.prototype.validate`),
 * strictly: the validator's own message, then each unknown field; `at` is where the object sits in its resource.
 */
export function kubernetesProblems(obj: unknown, validate: (data: unknown) => void, at: Path = []): string[] {
  const { error, unknown } = kubernetesUnknownFields(obj, validate);
  return [...(error ? [error] : []), ...unknown.map((p) => unknownField([...at, ...p]))];
}

/**
 * Validates metadata as the API server decodes it for every resource, custom ones included (a CRD's schema
 * cannot change it): as ObjectMeta.
 */
export function validateObjectMeta(data: unknown): void {
  const { ObjectMeta } = fromModels('@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta') as { ObjectMeta: { prototype: { validate(): void } } };
  ObjectMeta.prototype.validate.call(data);
}

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** ajv's errors as problems: `unknown field "…"` for a key a strict schema refuses, `data/… message` otherwise. */
export function ajvProblems(errors: AjvError[] | null | undefined): string[] {
  return (errors ?? []).map((e) =>
    e.keyword === 'additionalProperties' && e.params.additionalProperty !== undefined
      ? unknownField([...pointerPath(e.instancePath), String(e.params.additionalProperty)])
      : `data${e.instancePath} ${e.message}`,
  );
}
