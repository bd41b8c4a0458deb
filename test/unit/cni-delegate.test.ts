// Delegation mechanics with scripted stand-in plugins (the real host-local/static runs are in the
// integration tier): lookup in CNI_PATH, error pass-through, version negotiation and its cache.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execDelegate, findPlugin } from '../../src/cni/delegate';
import { Ipam } from '../../src/cni/ipam';
import { cacheFile, pluginVersions } from '../../src/cni/plugin-versions';
import { failure, rejection } from '../helpers/cni-failure';

let dir: string;
let binA: string;
let binB: string;
let stateDir: string;

/** A plugin that records each call (verb, stdin) and answers per verb. */
function writePlugin(where: string, name: string, versions: string[], addResult: unknown): string {
  const file = path.join(where, name);
  const log = path.join(dir, `${name}.calls`);
  fs.writeFileSync(
    file,
    `#!/bin/sh
stdin=$(cat)
printf '%s %s\\n' "$CNI_COMMAND" "$stdin" >> ${log}
case "$CNI_COMMAND" in
  VERSION) echo '${JSON.stringify({ cniVersion: '1.0.0', supportedVersions: versions })}' ;;
  ADD) echo '${JSON.stringify(addResult)}' ;;
  FAIL) echo '{"code": 7, "msg": "bad subnet", "details": "10.0.0.0/33"}'; exit 1 ;;
  GARBAGE) echo 'panic: runtime error' >&2; exit 2 ;;
  *) exit 0 ;;
esac
`,
    { mode: 0o755 },
  );
  return file;
}

function calls(name: string): { verb: string; stdin: any }[] {
  const file = path.join(dir, `${name}.calls`);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const sp = l.indexOf(' ');
      return { verb: l.slice(0, sp), stdin: l.slice(sp + 1) ? JSON.parse(l.slice(sp + 1)) : null };
    });
}


const DEBIAN = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0'];
const V100_RESULT = { cniVersion: '1.0.0', ips: [{ address: '10.5.0.7/24', gateway: '10.5.0.1' }], routes: [{ dst: '0.0.0.0/0' }], dns: {} };

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cni-delegate-'));
  binA = path.join(dir, 'a');
  binB = path.join(dir, 'b');
  fs.mkdirSync(binA);
  fs.mkdirSync(binB);
  stateDir = path.join(dir, 'state');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('findPlugin', () => {
  it('takes the first executable file along CNI_PATH', () => {
    fs.writeFileSync(path.join(binA, 'ipam1'), 'not executable', { mode: 0o644 });
    fs.mkdirSync(path.join(binA, 'ipam2'));
    const p1 = writePlugin(binB, 'ipam1', DEBIAN, {});
    const p2 = writePlugin(binB, 'ipam2', DEBIAN, {});
    expect(findPlugin('ipam1', [binA, binB])).toBe(p1);
    expect(findPlugin('ipam2', [binA, binB])).toBe(p2);
  });
  it('missing → code 104 naming the plugin and the path', () => {
    const e = failure(() => findPlugin('nope', [binA, binB]));
    expect(e.code).toBe(104);
    expect(e.message).toContain('"nope"');
    expect(e.message).toContain(binB);
  });
});

describe('execDelegate', () => {
  it('passes the plugin\'s own error object on, code and all', () => {
    const p = writePlugin(binA, 'ipam', DEBIAN, {});
    const e = failure(() => execDelegate({ path: p, label: 'ipam x', command: 'FAIL', stdin: '{}' }));
    expect(e.code).toBe(7);
    expect(e.message).toBe('ipam x FAIL: bad subnet');
    expect(e.details).toBe('10.0.0.0/33');
  });
  it('a crash without an error object → code 104 with the last stderr lines', () => {
    const p = writePlugin(binA, 'ipam', DEBIAN, {});
    const e = failure(() => execDelegate({ path: p, label: 'ipam x', command: 'GARBAGE', stdin: '{}' }));
    expect(e.code).toBe(104);
    expect(e.message).toContain('exit status 2');
    expect(e.details).toContain('panic');
  });
  it('a plugin that answers without reading stdin (EPIPE on our side) is still heard', () => {
    const p = path.join(binA, 'deaf');
    fs.writeFileSync(p, '#!/bin/sh\necho \'{"cniVersion":"1.0.0","supportedVersions":["1.0.0"]}\'\n', { mode: 0o755 });
    const out = execDelegate({ path: p, label: 'x', command: 'VERSION', stdin: 'x'.repeat(4 << 20) });
    expect(JSON.parse(out.stdout).supportedVersions).toEqual(['1.0.0']);
  });
  it('sets CNI_COMMAND and the overrides, keeps the rest of the environment it is handed', () => {
    const p = path.join(binA, 'envdump');
    fs.writeFileSync(p, '#!/bin/sh\necho "{\\"c\\":\\"$CNI_COMMAND\\",\\"id\\":\\"$CNI_CONTAINERID\\",\\"home\\":\\"$HOME\\"}"\n', { mode: 0o755 });
    const out = JSON.parse(execDelegate({ path: p, label: 'x', command: 'DEL', inherit: { HOME: '/home/x', CNI_CONTAINERID: 'c0' }, env: { CNI_CONTAINERID: 'c1' }, stdin: '' }).stdout);
    expect(out).toEqual({ c: 'DEL', id: 'c1', home: '/home/x' });
  });
});

describe('pluginVersions', () => {
  it('asks once, then answers from the state directory until the binary changes', () => {
    const p = writePlugin(binA, 'ipam', DEBIAN, {});
    expect(pluginVersions(stateDir, p, 'ipam')).toEqual(DEBIAN);
    expect(pluginVersions(stateDir, p, 'ipam')).toEqual(DEBIAN);
    expect(calls('ipam').filter((c) => c.verb === 'VERSION')).toHaveLength(1);
    expect(fs.existsSync(cacheFile(stateDir))).toBe(true);
    expect(fs.statSync(cacheFile(stateDir)).mode & 0o777).toBe(0o600);
    // an upgrade (new content, new mtime) is asked again, and its old entry dropped
    const later = new Date(Date.now() + 5000);
    writePlugin(binA, 'ipam', [...DEBIAN, '1.1.0'], {});
    fs.utimesSync(p, later, later);
    expect(pluginVersions(stateDir, p, 'ipam')).toEqual([...DEBIAN, '1.1.0']);
    expect(calls('ipam').filter((c) => c.verb === 'VERSION')).toHaveLength(2);
    expect(Object.keys(JSON.parse(fs.readFileSync(cacheFile(stateDir), 'utf8')).plugins)).toHaveLength(1);
  });
  it('a corrupt cache is only a cache', () => {
    const p = writePlugin(binA, 'ipam', DEBIAN, {});
    fs.mkdirSync(path.dirname(cacheFile(stateDir)), { recursive: true });
    fs.writeFileSync(cacheFile(stateDir), '{nope');
    expect(pluginVersions(stateDir, p, 'ipam')).toEqual(DEBIAN);
  });
  it('a VERSION answer without supportedVersions → code 105', () => {
    const p = path.join(binA, 'mute');
    fs.writeFileSync(p, '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
    expect(failure(() => pluginVersions(stateDir, p, 'ipam mute')).code).toBe(105);
  });
});

describe('Ipam', () => {
  const raw = { cniVersion: '1.1.0', name: 'n', type: 'sriovctl-cni', ipam: { type: 'ipam' } };

  it('speaks 1.0.0 to a plugin that stops there, and reads its result into 1.1.0 form', async () => {
    writePlugin(binA, 'ipam', DEBIAN, V100_RESULT);
    const ipam = new Ipam({ raw, type: 'ipam', cniVersion: '1.1.0', cniPath: [binA], stateDir });
    const r = await ipam.add();
    expect(r.ips).toEqual([{ address: '10.5.0.7/24', gateway: '10.5.0.1' }]);
    const add = calls('ipam').find((c) => c.verb === 'ADD')!;
    expect(add.stdin.cniVersion).toBe('1.0.0');
    expect(add.stdin.ipam).toEqual({ type: 'ipam' });
  });
  it('STATUS and GC are skipped for a plugin without them; CHECK is not', async () => {
    writePlugin(binA, 'ipam', DEBIAN, V100_RESULT);
    const ipam = new Ipam({ raw, type: 'ipam', cniVersion: '1.1.0', cniPath: [binA], stateDir });
    await ipam.status();
    await ipam.gc();
    await ipam.check({ cniVersion: '1.1.0', ips: [{ address: '10.5.0.7/24' }] });
    expect(calls('ipam').map((c) => c.verb)).toEqual(['VERSION', 'CHECK']);
    const check = calls('ipam')[1].stdin;
    expect(check.prevResult).toEqual({ cniVersion: '1.0.0', ips: [{ address: '10.5.0.7/24' }] });
  });
  it('STATUS and GC reach a 1.1.0 plugin', async () => {
    writePlugin(binA, 'ipam', [...DEBIAN, '1.1.0'], V100_RESULT);
    const ipam = new Ipam({ raw, type: 'ipam', cniVersion: '1.1.0', cniPath: [binA], stateDir });
    await ipam.status();
    await ipam.gc();
    expect(calls('ipam').map((c) => c.verb)).toEqual(['VERSION', 'STATUS', 'GC']);
    expect(calls('ipam')[1].stdin.cniVersion).toBe('1.1.0');
  });
  it('a 0.3.1 network gets its prevResult converted for the plugin, ips[].version included', async () => {
    writePlugin(binA, 'ipam', DEBIAN, V100_RESULT);
    const ipam = new Ipam({ raw: { ...raw, cniVersion: '0.3.1' }, type: 'ipam', cniVersion: '0.3.1', cniPath: [binA], stateDir });
    await ipam.del(undefined, { cniVersion: '1.1.0', ips: [{ address: '10.5.0.7/24' }] });
    const del = calls('ipam').find((c) => c.verb === 'DEL')!;
    expect(del.stdin.cniVersion).toBe('0.3.1');
    expect(del.stdin.prevResult.ips).toEqual([{ version: '4', address: '10.5.0.7/24' }]);
  });
  it('no shared version → code 1', async () => {
    // an old plugin is fine for an old network: its ip4/ip6 result is read
    writePlugin(binA, 'ipam', ['0.1.0', '0.2.0'], { cniVersion: '0.2.0', ip4: { ip: '10.5.0.7/24', gateway: '10.5.0.1', routes: [{ dst: '0.0.0.0/0' }] } });
    const old = new Ipam({ raw, type: 'ipam', cniVersion: '0.1.0', cniPath: [binA], stateDir }).add();
    expect(await old).toMatchObject({ ips: V100_RESULT.ips, routes: V100_RESULT.routes });
    writePlugin(binA, 'ipam', ['2.0.0'], V100_RESULT);
    const ipam = new Ipam({ raw, type: 'ipam', cniVersion: '1.1.0', cniPath: [binA], stateDir });
    expect((await rejection(ipam.add())).code).toBe(1);
  });
  it('an unusable ADD result → code 105', async () => {
    writePlugin(binA, 'ipam', DEBIAN, { cniVersion: '1.0.0', ips: [{ address: 'nope' }] });
    const ipam = new Ipam({ raw, type: 'ipam', cniVersion: '1.1.0', cniPath: [binA], stateDir });
    const e = await rejection(ipam.add());
    expect(e.code).toBe(105);
    expect(e.message).toContain('ips[0].address');
  });
});
