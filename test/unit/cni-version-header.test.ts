// native/cni_version.h, what the C front ends answer without Node (CNI VERSION, a run by hand), is what the
// TypeScript answers: made from it by scripts/cni-version-header.mjs (npm run build), and stale when this fails.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without types
import { HEADER, headerText } from '../../scripts/cni-version-header.mjs';
import { aboutPlugin, versionReply } from '../../src/cni/versions';

describe('native/cni_version.h', () => {
  it('holds the answers src/cni/versions.ts gives (npm run build remakes it)', () => {
    expect(readFileSync(HEADER, 'utf8')).toBe(headerText(versionReply(), aboutPlugin()));
  });

  it('would change with the supported versions (what the check above compares is the list itself)', () => {
    const reply = versionReply();
    const fewer = { ...reply, supportedVersions: reply.supportedVersions.slice(1) };
    expect(headerText(fewer, aboutPlugin())).not.toBe(headerText(reply, aboutPlugin()));
    expect(headerText(reply, aboutPlugin())).toContain(JSON.stringify(JSON.stringify(reply) + '\n'));
  });
});
