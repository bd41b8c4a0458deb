// A network config larger than MAX_STDIN_BYTES (1 MiB) is refused with code 7 naming stdin,
// before anything is lent, and without being read whole — a 100 MB config no longer costs 100 MB of memory.
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_STDIN_BYTES } from '../../src/cni/stdio';
import { DEBIAN_CNI, expectErrorShape, ledgerRecords, PLUGIN, runCni, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import type { Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

let world: CniPodWorld;
useCniPodWorld((w) => (world = w), 's0', { tempDir: 'sriovctl-cni-stdin-' });
const fixture = () => world;
let s: Scratch;
let roots: CniRoots;
let dir: string;
let nic: NicState;
let pod: string;
beforeEach(() => ({ s, roots, dir, nic, pod } = fixture()));

/** A valid config for the stand-in NIC, padded with an unknown field to exactly `bytes` bytes of JSON. */
function configOfSize(bytes: number): string {
  const base = { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, padding: '' };
  const pad = bytes - JSON.stringify(base).length;
  return JSON.stringify({ ...base, padding: 'x'.repeat(pad) });
}

const call = (command: string, config: string) =>
  runCni({ command, containerId: `c-${s.prefix}`, netns: `/var/run/netns/${pod}`, ifname: 'net1', config }, roots);

describe('stdin is capped at 1 MiB', () => {
  it('is 1 MiB', () => {
    expect(MAX_STDIN_BYTES).toBe(1024 * 1024);
  });

  it('a config of exactly the limit is read and used', () => {
    const config = configOfSize(MAX_STDIN_BYTES);
    expect(Buffer.byteLength(config)).toBe(MAX_STDIN_BYTES);
    const add = call('ADD', config);
    expect(add.status, add.stdout + add.stderr.slice(0, 2000)).toBe(0);
    expect(call('DEL', config).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('one byte more is refused with code 7 naming stdin, and nothing is lent', () => {
    const add = call('ADD', configOfSize(MAX_STDIN_BYTES + 1));
    expect(expectErrorShape(add)).toEqual({
      cniVersion: '1.1.0',
      code: 7,
      msg: `invalid config: stdin: the network config is larger than ${MAX_STDIN_BYTES} bytes`,
      details: 'stdin',
    });
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });

  it('a 100 MB config is refused without being read: the plugin\'s peak memory stays far below its size', () => {
    const big = join(dir, 'big.json');
    const fd = openSync(big, 'w');
    try {
      writeSync(fd, `{"cniVersion":"1.1.0","name":"n","type":"sriovctl-cni","device":"${nic.name}","padding":"`);
      const chunk = Buffer.alloc(1 << 20, 'x');
      for (let i = 0; i < 100; i++) writeSync(fd, chunk);
      writeSync(fd, '"}');
    } finally {
      closeSync(fd);
    }
    // the plugin's own peak RSS, written as it exits (the same measure as the bench's)
    const rssOut = join(dir, 'rss');
    const preload = join(dir, 'rss.cjs');
    writeFileSync(preload, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(rssOut)}, String(process.resourceUsage().maxRSS)));\n`);
    const stdin = openSync(big, 'r');
    let r;
    try {
      r = spawnSync(process.execPath, ['--require', preload, PLUGIN], {
        env: {
          PATH: process.env.PATH,
          SRIOVCTL_STATE_DIR: roots.stateDir,
          SRIOVCTL_SYSFS_ROOT: roots.sim.root,
          CNI_COMMAND: 'ADD',
          CNI_CONTAINERID: `c-${s.prefix}`,
          CNI_NETNS: `/var/run/netns/${pod}`,
          CNI_IFNAME: 'net1',
          CNI_PATH: DEBIAN_CNI,
        },
        stdio: [stdin, 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 120_000,
      });
    } finally {
      closeSync(stdin);
    }
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 7, details: 'stdin' });
    const peakMiB = Number(readFileSync(rssOut, 'utf8')) / 1024;
    // reading it whole took more than twice its size (bytes, then a string); now the cap and Node's own ~40 MiB
    expect(peakMiB).toBeLessThan(90);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });
});
