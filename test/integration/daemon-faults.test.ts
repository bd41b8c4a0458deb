// The resident path's faults, with a real `sriovctl daemon`, the real shim and a stand-in NIC: a daemon killed
// in the middle of an ADD, restarted while a request waits, a stale socket or a non-socket at its path, a caller
// that is not root, a client that stalls half-way, a 100 MB stdin — and in each, the NIC comes home.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeHello, encodeHello, encodeRequest, HELLO_BYTES, RequestKind, StdinState, Verdict } from '../../src/daemon/wire';
import { expectErrorShape, ledgerRecords, netnsPath, runCni, runCniAsync, SHIM, type CniCall, type CniRoots } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';
import { startDaemon, useDaemons } from '../helpers/daemon-process';
import { ipJson, type Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dir: string;

useCniPodWorld((w) => ({ s, roots, pod, nic, dir } = w), 'q0', { tempDir: 'sriovctl-daemon-' });

const sock = () => join(dir, 'run', 'cni.sock');

const daemon = useDaemons(sock);

function conf() {
  return deviceConf(s, nic, { type: 'static', addresses: [{ address: '10.77.0.5/24' }] });
}

function shimCall(command: string, more: Partial<CniCall> = {}): CniCall {
  return {
    command,
    containerId: 'c1',
    netns: netnsPath(pod),
    ifname: 'net1',
    config: conf(),
    transport: 'shim',
    ...more,
    env: { SRIOVCTL_SOCKET: sock(), ...more.env },
  };
}
const shim = (command: string, more: Partial<CniCall> = {}) => runCni(shimCall(command, more), roots);

function expectHome(): void {
  expect(nicState(nic.name)).toEqual(nic);
  expect(ipJson<any[]>('-n', pod, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
  expect(ledgerRecords(roots.stateDir)).toEqual([]);
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

/** A raw client: connects, returns the greeting's verdict and the open socket. */
function greet(path: string): Promise<{ verdict: Verdict; sock: ReturnType<typeof connect> }> {
  return new Promise((resolve, reject) => {
    const c = connect(path);
    let buf = Buffer.alloc(0);
    c.on('error', reject);
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= HELLO_BYTES) {
        c.removeAllListeners('data');
        resolve({ verdict: decodeHello(buf.subarray(0, HELLO_BYTES)), sock: c });
      }
    });
  });
}

describe('through the daemon', () => {
  it('ADD and DEL run in the daemon (its counts say so), and status shows it', async () => {
    const d = await daemon();
    const add = shim('ADD');
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.json.interfaces[0].name).toBe('net1');
    expect(shim('DEL').status).toBe(0);
    expectHome();
    const st = await d.stats();
    expect(st).toMatchObject({ pid: d.child.pid, requests: { total: 2, failed: 0, byVerb: { ADD: 1, DEL: 1 } }, declined: 0, refused: 0 });
    const cli = spawnSync(process.execPath, [join(__dirname, '..', '..', 'bin', 'sriovctl.js'), '--state-dir', roots.stateDir, 'status'], {
      env: { PATH: process.env.PATH, SRIOVCTL_SOCKET: sock() },
      encoding: 'utf8',
    });
    expect(cli.stdout).toMatch(new RegExp(`^daemon: pid ${d.child.pid} on ${sock()}, up \\d+ s, 2 requests \\((ADD 1, DEL 1)\\), 0 failed`, 'm'));
  });

  it('a caller in another network namespace is sent back to the one-shot plugin (its NICs\' home is not ours)', async () => {
    const d = await daemon();
    const home = s.netns('home');
    const v = runCni(shimCall('VERSION', { inNetns: home }), roots);
    expect(v.status).toBe(0);
    expect((await d.stats()).declined).toBe(1);
    expect((await d.stats()).requests.total).toBe(0);
  });
});

describe('faults', () => {
  it('daemon SIGKILLed in the middle of an ADD: the shim says so (109), the runtime\'s DEL (through the fallback) brings the NIC home', async () => {
    const d = await daemon({ SRIOVCTL_FAILPOINT: 'lend:moved' });
    const add = await runCniAsync(shimCall('ADD'), roots);
    const err = expectErrorShape(add);
    expect(err.code).toBe(109);
    expect(err.msg).toContain('gave no reply');
    expect((await d.exited).signal).toBe('SIGKILL');
    expect(nicState('net1', pod)).not.toBeNull(); // half-done: moved, not configured
    expect(existsSync(sock())).toBe(true); // the dead daemon's socket is left behind
    const del = shim('DEL');
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expectHome();
  });

  it('daemon restarted while a request waits: the old one finishes it, the new one serves the next', async () => {
    const old = await daemon();
    // an ADD whose runtime has not closed stdin yet: greeted, waiting for the rest of its request
    const call = shimCall('ADD');
    const child = spawn(SHIM, [], { env: { PATH: process.env.PATH, SRIOVCTL_STATE_DIR: roots.stateDir, SRIOVCTL_SYSFS_ROOT: roots.sim.root, CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: call.netns, CNI_IFNAME: 'net1', CNI_PATH: '/usr/lib/cni', SRIOVCTL_SOCKET: sock() } });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (x) => (out += x));
    const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    for (let i = 0; (await old.stats()).connections < 2 && i < 400; i++) await new Promise((r) => setTimeout(r, 25)); // its and ours
    old.child.kill('SIGTERM');
    for (let i = 0; existsSync(sock()) && i < 400; i++) await new Promise((r) => setTimeout(r, 25)); // it let go of the path
    expect(existsSync(sock())).toBe(false);
    const fresh = await daemon(); // binds the path the old one gave up, while the old one drains
    expect(shim('VERSION').status).toBe(0);
    expect((await fresh.stats()).requests.byVerb).toEqual({ VERSION: 1 });
    child.stdin.end(JSON.stringify(conf()));
    expect(await done, out).toBe(0);
    expect(JSON.parse(out).interfaces[0].name).toBe('net1');
    expect(await old.exited).toEqual({ code: 0, signal: null });
    const del = shim('DEL');
    expect(del.status, del.stdout).toBe(0);
    expect((await fresh.stats()).requests.byVerb).toEqual({ VERSION: 1, DEL: 1 });
    expectHome();
  });

  it('a stale socket at the path: the shim falls back, a new daemon takes the path over', async () => {
    const first = await daemon();
    first.child.kill('SIGKILL');
    await first.exited;
    expect(existsSync(sock())).toBe(true);
    expect(shim('ADD').status).toBe(0); // one-shot
    const d = await daemon();
    expect(shim('DEL').status).toBe(0);
    expect((await d.stats()).requests.byVerb).toEqual({ DEL: 1 });
    expectHome();
  });

  it('a non-socket at the path: the daemon refuses to start naming it and leaves it; the shim falls back', async () => {
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    writeFileSync(sock(), 'not a socket');
    await expect(startDaemon(sock(), {}, 10_000)).rejects.toThrow(`${sock()} exists and is not a socket`);
    expect(readFileSync(sock(), 'utf8')).toBe('not a socket');
    expect(shim('ADD').status).toBe(0);
    expect(shim('DEL').status).toBe(0);
    expectHome();
  });

  it('a caller that is not root: the socket is root\'s alone, and even opened up the daemon refuses it', async () => {
    const d = await daemon();
    const asNobody = (script: string) =>
      spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script, sock()], { encoding: 'utf8', timeout: 30_000 });
    const client = `const c=require('net').connect(process.argv[1]);c.on('error',e=>{console.log('error '+e.code);process.exit(0)});c.on('data',d=>{console.log('verdict '+d[5]);process.exit(0)})`;
    expect(asNobody(client).stdout.trim()).toBe('error EACCES');
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'run'), 0o755);
    chmodSync(sock(), 0o666);
    expect(asNobody(client).stdout.trim()).toBe(`verdict ${Verdict.refused}`);
    const st = await d.stats();
    expect(st.refused).toBe(1);
    expect(st.requests.total).toBe(0);
    expect(d.log()).toMatch(/refused pid \d+: uid 65534 is not root/);
  });

  it('a client that sends half a request and stalls holds no one else, and is cut off at its deadline', async () => {
    const d = await daemon({ SRIOVCTL_DAEMON_REQUEST_DEADLINE_S: '3' });
    const { verdict, sock: stalled } = await greet(sock());
    expect(verdict).toBe(Verdict.go);
    stalled.write(Buffer.from('SRQ1\0\0')); // 6 of the header's 16 bytes
    const closed = new Promise<void>((r) => stalled.on('close', () => r()));
    stalled.on('error', () => {});
    const add = shim('ADD');
    expect(add.status, add.stdout).toBe(0);
    expect(shim('DEL').status).toBe(0);
    expectHome();
    await closed;
    const st = await d.stats();
    expect(st.broken).toBe(1);
    expect(d.log()).toContain('no whole request within 3 s');
  });

  it('100 MB of stdin: refused as the one-shot plugin refuses it (7), the daemon\'s memory stays bounded', async () => {
    const d = await daemon();
    expect(shim('VERSION').status).toBe(0);
    const before = rssKiB(d.child.pid!);
    const huge = 'x'.repeat(100 * 1024 * 1024);
    const viaShim = await runCniAsync(shimCall('ADD', { config: huge }), roots);
    const oneShot = runCni({ ...shimCall('ADD', { config: huge }), transport: 'oneshot' }, roots);
    expect(expectErrorShape(viaShim)).toEqual(expectErrorShape(oneShot));
    expect(viaShim.json.code).toBe(7);
    // a raw client declaring 100 MB: answered once the environment is in, without waiting for (or reading) the body
    const { sock: raw } = await greet(sock());
    const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: netnsPath(pod), CNI_IFNAME: 'net1', CNI_PATH: '/usr/lib/cni', SRIOVCTL_STATE_DIR: roots.stateDir };
    const head = encodeRequest({ kind: RequestKind.cni, env, stdinState: StdinState.read, stdin: '' });
    head.writeUInt32LE(100 * 1024 * 1024, 12); // the declared stdin length
    const reply = new Promise<Buffer>((r) => {
      let b = Buffer.alloc(0);
      raw.on('data', (x: Buffer) => (b = Buffer.concat([b, x])));
      raw.on('close', () => r(b));
      raw.on('error', () => {});
    });
    raw.write(head);
    const answer = await reply;
    expect(answer.toString('latin1', 0, 4)).toBe('SRP1');
    expect(answer.toString('utf8', 16)).toContain('larger than 1048576 bytes');
    const grew = rssKiB(d.child.pid!) - before;
    expect(grew).toBeLessThan(32 * 1024); // far below the 200 MB two copies would take
    expectHome();
  });
});

describe('what the shim does without a daemon that answers', () => {
  it('a socket that accepts but never greets: the one-shot plugin runs after the bound, nothing hangs', async () => {
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    const { createServer } = await import('node:net');
    const mute = createServer(() => {}).listen(sock());
    s.onCleanup(() => void mute.close());
    await new Promise((r) => mute.once('listening', r));
    const add = await runCniAsync(shimCall('ADD', { env: { SRIOVCTL_DAEMON_WAIT_MS: '300' } }), roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect((await runCniAsync(shimCall('DEL', { env: { SRIOVCTL_DAEMON_WAIT_MS: '300' } }), roots)).status).toBe(0);
    expectHome();
  });

  it.each([
    ['bad magic', (b: Buffer) => b.write('XXXX', 0, 'latin1'), 'bad magic'],
    ['an exit code past 255', (b: Buffer) => b.writeUInt32LE(300, 4), 'exit code 300'],
    ['lengths past the bound', (b: Buffer) => b.writeUInt32LE(0xffffffff, 8), 'bytes of output'],
    ['a body cut short', (b: Buffer) => b.writeUInt32LE(1000, 8), 'cut short'],
  ])('a malformed reply (%s) is CNI error 109 naming the cause', async (_what, spoil, cause) => {
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    const { createServer } = await import('node:net');
    const liar = createServer((c) => {
      c.write(encodeHello(Verdict.go));
      c.on('data', () => {});
      c.on('end', () => {
        const reply = Buffer.alloc(16 + 2);
        reply.write('SRP1', 0, 'latin1');
        reply.writeUInt32LE(0, 4);
        reply.writeUInt32LE(2, 8);
        reply.write('{}', 16);
        spoil(reply);
        c.end(reply);
      });
    }).listen(sock());
    s.onCleanup(() => void liar.close());
    await new Promise((r) => liar.once('listening', r));
    const add = await runCniAsync(shimCall('ADD'), roots);
    const err = expectErrorShape(add);
    expect(err.code).toBe(109);
    expect(err.msg).toContain(cause);
    expectHome(); // nothing ran
  });

  it('a daemon that takes the call and never answers: 109 after the bound', async () => {
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    const { createServer } = await import('node:net');
    const silent = createServer({ allowHalfOpen: true }, (c) => {
      c.write(encodeHello(Verdict.go));
      c.on('data', () => {});
    }).listen(sock());
    s.onCleanup(() => void silent.close());
    await new Promise((r) => silent.once('listening', r));
    const add = await runCniAsync(shimCall('ADD', { env: { SRIOVCTL_DAEMON_REPLY_MS: '500' } }), roots);
    expect(expectErrorShape(add).msg).toContain('no reply in time');
  });
});
