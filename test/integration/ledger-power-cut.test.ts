// What a power cut leaves of the ledger on a real ext4: the state dir on a loop-mounted image, EXT4_IOC_SHUTDOWN
// (the journal flushed, every write not yet on disk dropped) at seeded random moments of `attach`, `detach`, CNI
// ADD and CNI DEL, then the filesystem mounted again and the NIC given back from what survived (`cleanup`, or the
// pod's DEL): never an empty or corrupt record, every NIC home with its name, MAC and MTU. A record's rewrites need
// not be durable, and ext4 can commit a rename before the data it names (one swapped in by renameat2's exchange came
// back 0 bytes; one renamed over the old file without its data fsynced came back as zeros of its size, the case of
// the second suite): a file's data is fsynced before its rename, unless the record's last durable version is kept
// beside it as a hard link, which the ledger reads when the rewrite came back as zeros (the second suite's record step). The first
// write is fsynced before its rename (one renamed first, then fsynced on a thread, came back empty when the cut
// followed its writer's death).
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSriovctl, sriovctl, type CliEnv } from '../helpers/cli-process';
import { netnsPath, requireBundle, runCni, runCniAsync, type CniAnswer } from '../helpers/cni-run';
import { Ext4Image } from '../helpers/ext4-image';
import { prng } from '../helpers/hostile-inputs';
import { ip, Scratch } from '../helpers/kernel';
import { nicState, standInNic } from '../helpers/lend-fixture';
import { SimSysfs } from '../../src/sriov/sim';
import { writeFileAtomic } from '../../src/fs/atomic-file';
import { advanceRecord, deleteRecord, readRecord, recordPath, scanRecords, writeRecord, type Ledger } from '../../src/ledger';
import { sampleRecord } from '../helpers/ledger-record';

const ROUNDS_PER_DOOR = 3;
const SEED = Number(process.env.SRIOVCTL_CRASH_SEED) || Math.floor(Math.random() * 2 ** 31);
/** The cut comes at a uniform moment of this many times the door's own duration (some land after it is done). */
const SPREAD = 1.3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** The front doors, and an attach killed the moment its record is written (the cut as soon as it is gone). */
type Door = 'attach' | 'detach' | 'add' | 'del' | 'attach-killed';

describe('a power cut on ext4 at random moments of a lend or a give-back', () => {
  let s: Scratch;
  let image: Ext4Image | null = null;
  let sim: SimSysfs;
  beforeEach(() => {
    requireBundle();
    s = new Scratch();
    sim = SimSysfs.create();
    s.onCleanup(() => sim.remove());
  });
  afterEach(async () => {
    try {
      await image?.remove();
    } finally {
      image = null;
      s.cleanup();
    }
  });

  it(`leaves every record whole and every NIC home (${ROUNDS_PER_DOOR} cuts per front door)`, { timeout: 300_000 }, async () => {
    const random = prng(SEED);
    const nic = standInNic(s, 'n0');
    const target = s.netns('tgt');
    const pod = s.netns('pod');
    const fsImage = (image = await Ext4Image.create());
    const stateDir = path.join(fsImage.mountPoint, 'state');
    const cli: CliEnv = { stateDir, sysfsRoot: sim.root, launcher: fsImage.launcher };
    const roots = { stateDir, sim };
    const recordsHere = () => recordFiles(fsImage.view(stateDir));
    const attachArgs = ['attach', nic.name, target, '--as', 'eth7'];
    const conf = { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, ipam: { type: 'static', addresses: [{ address: '10.79.0.5/24' }] } };
    const cniCall = (command: string) => ({ command, containerId: `ctr-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config: conf, transport: 'oneshot' as const, launcher: fsImage.launcher });
    /** What the last give-back printed, for the message when the NIC is not home after it. */
    let lastOutput = '';
    const expectCni = (a: CniAnswer, what: string) => {
      lastOutput = `${what}: ${a.stdout}${a.stderr}`;
      expect(a.status, lastOutput).toBe(0);
    };
    const expectCli = async (args: string[]) => {
      const r = await sriovctl(cli, args);
      lastOutput = `sriovctl ${args.join(' ')}: ${r.stdout}${r.stderr}`;
      expect(r.code, lastOutput).toBe(0);
    };

    /** Each door's work as a process of its own (what the cut interrupts). */
    const start: Record<Door, () => Promise<unknown>> = {
      attach: () => exited(startSriovctl(cli, attachArgs)),
      'attach-killed': () => exited(startSriovctl({ ...cli, extra: { SRIOVCTL_FAILPOINT: 'lend:recorded' } }, attachArgs)),
      detach: () => exited(startSriovctl(cli, ['detach', nic.name])),
      add: () => runCniAsync(cniCall('ADD'), roots),
      del: () => runCniAsync(cniCall('DEL'), roots),
    };
    /** What a give-back door needs lent first (written by a whole lend: its records not yet on disk, as in service). */
    const before: Record<Door, () => Promise<void>> = {
      attach: async () => {},
      'attach-killed': async () => {},
      detach: () => expectCli(attachArgs),
      add: async () => {},
      del: async () => expectCni(runCni(cniCall('ADD'), roots), 'ADD'),
    };
    /** What the next boot runs: cleanup for the CLI, the pod's DEL for the CNI (a runtime calls DEL again). */
    const giveBack: Record<Door, () => Promise<void>> = {
      attach: () => expectCli(['cleanup']),
      'attach-killed': () => expectCli(['cleanup']),
      detach: () => expectCli(['cleanup']),
      add: async () => expectCni(runCni(cniCall('DEL'), roots), 'DEL after the cut'),
      del: async () => expectCni(runCni(cniCall('DEL'), roots), 'DEL after the cut'),
    };
    const doors: Door[] = ['attach', 'detach', 'add', 'del', 'attach-killed'];

    // how long each door takes here, now (a lend, then its give-back, for both front doors)
    const took = {} as Record<Door, number>;
    for (const door of ['attach', 'detach', 'add', 'del'] as const) {
      const t0 = performance.now();
      await start[door]();
      took[door] = performance.now() - t0;
    }
    expect(nicState(nic.name)).toEqual(nic);

    const seen: string[] = [];
    for (let round = 0; round < ROUNDS_PER_DOOR; round++) {
      for (const door of doors) {
        const where = `seed ${SEED} (SRIOVCTL_CRASH_SEED), round ${round}, ${door}`;
        await before[door]();
        const cut = await fsImage.arm();
        const delay = random() * (took[door] ?? 0) * SPREAD;
        const work = start[door]();
        if (door === 'attach-killed') await work;
        else await sleep(delay);
        await cut.fire();
        await work;
        const moment = door === 'attach-killed' ? 'once it was killed' : `${delay.toFixed(0)} ms in`;
        fsImage.remount();

        const files = recordsHere();
        // every file the cut left, temp files too: a whole hidden temp beside no record is a rename the cut undid
        const leftByCut = everyFile(fsImage.view(stateDir));
        // read as every front door reads it: a rewrite that came back as zeros is read from its durable copy
        const scan = scanRecords(viewedLedger(fsImage.view(stateDir)));
        expect(scan.corrupt, `${where}: after the cut ${moment} (files ${leftByCut})`).toEqual([]);
        expect(scan.records, `${where}: after the cut ${moment} (files ${leftByCut})`).toHaveLength(files.length);
        const fromCopy = files.some((f) => !parses(fs.readFileSync(f, 'utf8'))) ? ' (from its durable copy)' : '';
        seen.push(`${door}@${moment}:${scan.records[0]?.phase ?? 'none'}${fromCopy}`);

        await giveBack[door]();
        const home = nicState(nic.name);
        if (!home) console.log(`${where}: not home after the cut ${moment} (${seen.at(-1)}; files ${leftByCut}); ${lastOutput}; the links of the test's namespaces: ${[target, pod].map((n) => `${n}: ${ip('-n', n, '-br', 'link')}`).join(' ')}`);
        expect(home, `${where}: the NIC after the give-back`).toEqual(nic);
        expect(recordsHere(), where).toEqual([]);
      }
    }
    console.log(`power cuts (seed ${SEED}; ms per door ${JSON.stringify(Object.fromEntries(Object.entries(took).map(([d, ms]) => [d, Math.round(ms)])))}): ${seen.join(' ')}`);
  });
});

describe('a power cut on ext4 right after a rewrite that need not be durable', () => {
  let image: Ext4Image | null = null;
  afterEach(async () => {
    await image?.remove();
    image = null;
  });

  // ext4 mounted as it comes (delalloc, auto_da_alloc, dioread_nolock): a file renamed over another without its data
  // fsynced came back as zeros of the new size in about one cut in five made at once (8 of 40 here), never as the
  // old content; a rewrite a record step makes must come back old or new
  it('leaves the old content or the new, never zeros', { timeout: 120_000 }, async () => {
    const fsImage = (image = await Ext4Image.create());
    const file = fsImage.view(path.join(fsImage.mountPoint, 'record.json'));
    const seen = new Map<string, number>();
    for (let round = 0; round < 30; round++) {
      const before = `{"round":${round},"was":"old"}`.padEnd(700) + '\n';
      const after = `{"round":${round},"was":"new"}`.padEnd(760) + '\n';
      writeFileAtomic(file, before, 0o600);
      const cut = await fsImage.arm();
      writeFileAtomic(file, after, 0o600, { durable: false });
      await cut.fire();
      fsImage.remount();
      const text = fs.readFileSync(file, 'utf8');
      const kind = text === before ? 'old' : text === after ? 'new' : `${text.length} B of something else (${JSON.stringify(text.slice(0, 16))}…)`;
      seen.set(kind, (seen.get(kind) ?? 0) + 1);
      expect(kind, `round ${round}`).toMatch(/^(old|new)$/);
      fs.rmSync(file);
    }
    console.log(`rewrites cut at once: ${JSON.stringify(Object.fromEntries(seen))}`);
  });

  // a record step's rewrite is not fsynced at all, its durable copy beside it: a rewrite without its data fsynced came
  // back as zeros in 1 to 8 cuts of 40 made at once (the case above, before its data was fsynced; 1 in 40 on
  // 2026-12's machines), and each such record must be read from the durable copy of its first write (the unit tests
  // zero one by hand), the rest as they were before the step or after it
  it('is read as it was before the step or after it, never corrupt', { timeout: 120_000 }, async () => {
    const fsImage = (image = await Ext4Image.create());
    const ledger = viewedLedger(fsImage.view(path.join(fsImage.mountPoint, 'state')));
    fs.mkdirSync(path.join(ledger.dir, 'records'), { recursive: true, mode: 0o700 });
    const seen = new Map<string, number>();
    for (let round = 0; round < 30; round++) {
      const first = sampleRecord({ step: 'lend:recorded', phase: 'lending', meta: { round } });
      writeRecord(ledger, first);
      const cut = await fsImage.arm();
      advanceRecord(ledger, { ...first, phase: 'lent' }, 'lend:configured');
      await cut.fire();
      fsImage.remount();
      const file = recordPath(ledger, first.key);
      const read = readRecord(ledger, first.key);
      const kind = `${read?.step}${parses(fs.readFileSync(file, 'utf8')) ? '' : ' (from its durable copy)'}`;
      seen.set(kind, (seen.get(kind) ?? 0) + 1);
      expect(read?.meta, `round ${round}`).toEqual({ round });
      expect(kind, `round ${round}`).toMatch(/^(lend:recorded|lend:configured)$|^lend:recorded \(from its durable copy\)$/);
      deleteRecord(ledger, first.key);
    }
    console.log(`record steps cut at once: ${JSON.stringify(Object.fromEntries(seen))}`);
  });
});

/**
 * The ledger at `dir` (a view() path) without openLedger's trust check, which refuses /proc/<pid>/root (a symbolic
 * link) as it should; and without the owner index, which these reads do not use.
 */
function viewedLedger(dir: string): Ledger {
  return { dir };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Every file of the ledger's records dir with its size, hidden temp files too ('none' when there is none). */
function everyFile(stateDir: string): string {
  const dir = path.join(stateDir, 'records');
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  return names.map((f) => `${f} (${fs.statSync(path.join(dir, f)).size} B)`).join(', ') || 'none';
}

/** The record files of the ledger (temp files of an interrupted write are hidden, and not records). */
function recordFiles(stateDir: string): string[] {
  const dir = path.join(stateDir, 'records');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
    .map((f) => path.join(dir, f));
}
