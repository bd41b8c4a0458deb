// The strictness the schema tests rely on (test/helpers/strict-fields.ts): which objects it closes, which it leaves
// free, and how it names a field.
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { ajvProblems, fieldPath, kubernetesProblems, pointerPath, strictSchema } from '../helpers/strict-fields';

function problemsOf(schema: object, data: unknown): string[] {
  const validate = new Ajv({ strict: false, allErrors: true }).compile(strictSchema(schema));
  return validate(data) ? [] : ajvProblems(validate.errors);
}

describe('strictSchema', () => {
  const string = { type: 'string' };

  it('closes every object that declares properties, at any depth, through items and maps of objects', () => {
    const schema = {
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'object', properties: { a: string } } },
        byName: { type: 'object', additionalProperties: { type: 'object', properties: { b: string } } },
      },
    };
    expect(problemsOf(schema, { list: [{ a: 'x' }], byName: { any: { b: 'y' } } })).toEqual([]);
    expect(problemsOf(schema, { lsit: [], list: [{ a: 'x', c: 1 }], byName: { any: { bb: 'y' } } })).toEqual([
      'unknown field "lsit"',
      'unknown field "list[0].c"',
      'unknown field "byName.any.bb"',
    ]);
  });

  it('leaves free what the schema leaves free: maps, preserve-unknown-fields, objects without properties', () => {
    const schema = {
      type: 'object',
      properties: {
        labels: { type: 'object', additionalProperties: string },
        raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: string } },
        any: { type: 'object' },
        patterned: { type: 'object', properties: { a: string }, patternProperties: { '^x-': {} } },
      },
    };
    expect(problemsOf(schema, { labels: { a: 'b' }, raw: { known: 'k', other: 1 }, any: { x: { y: 1 } }, patterned: { 'x-1': 1 } })).toEqual([]);
    expect(problemsOf(schema, { patterned: { b: 1 } })).toEqual(['unknown field "patterned.b"']);
  });

  it('keeps the branches of allOf/anyOf/oneOf open (each sees only its own properties), their insides closed', () => {
    const schema = {
      type: 'object',
      allOf: [
        { properties: { a: string } },
        { properties: { b: { type: 'object', properties: { c: string } } } },
      ],
    };
    expect(problemsOf(schema, { a: 'x', b: { c: 'y' } })).toEqual([]);
    expect(problemsOf(schema, { a: 'x', b: { cc: 'y' } })).toEqual(['unknown field "b.cc"']);
  });

  it('does not change the schema it is given', () => {
    const schema = { type: 'object', properties: { a: { type: 'object', properties: {} } } };
    const copy = structuredClone(schema);
    strictSchema(schema);
    expect(schema).toEqual(copy);
  });
});

describe('kubernetesProblems', () => {
  const validate = (data: unknown) => DaemonSet.prototype.validate.call(data);
  const ds = (podSpec: object) => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'x', labels: { 'any/label': 'y' } },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: podSpec } },
  });

  it('names unknown fields after the validator\'s own message, free maps stay free', () => {
    const good = { containers: [{ name: 'c', resources: { limits: { 'vendor.example/nic': '1' } } }], nodeSelector: { any: 'x' } };
    expect(kubernetesProblems(ds(good), validate)).toEqual([]);
    expect(kubernetesProblems(ds({ containers: [{ nmae: 'c' }] }), validate)).toEqual([
      'data/spec/template/spec/containers/0 must have required property name',
      'unknown field "spec.template.spec.containers[0].nmae"',
    ]);
  });

  it('paths: pointers in, API server field paths out', () => {
    expect(pointerPath('/spec/containers/0/a~1b~0c')).toEqual(['spec', 'containers', 0, 'a/b~c']);
    expect(fieldPath(['spec', 'containers', 0, 'volumeMounts', 1, 'name'])).toBe('spec.containers[0].volumeMounts[1].name');
  });
});
