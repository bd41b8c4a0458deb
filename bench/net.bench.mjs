// The addon against iproute2 on 200 links in a scratch namespace: one `ip` exec per operation, and
// `ip -batch` over the same operations (iproute2's own C loop). Operations: set alias, set up/down,
// rename, move to another namespace and back. Contenders alternate within each round (rotated order);
// per-operation costs are medians over rounds.
//   ratio addon/ip-batch:<op>  target ≤ 1.2 (every op)
//   ratio ip-exec/addon:<op>   target ≥ 20 for alias and updown (tens of µs of kernel work per op, so a process
//                              start-up per op shows); printed without a target for rename (≈ 75 µs) and move
//                              (milliseconds), where it says little beyond "no process per op", which
//                              addon/ip-batch ≤ 1.2 already proves
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { median, rotate, roundRatios, timeMs } from './bench-helpers.mjs';

const require = createRequire(import.meta.url);
const LINKS = Number(process.env.SRIOVCTL_BENCH_LINKS || 200);
const ROUNDS = Number(process.env.SRIOVCTL_BENCH_ROUNDS || 5);
const MOVE_ROUNDS = Number(process.env.SRIOVCTL_BENCH_MOVE_ROUNDS || 3);

/** ip-exec/addon targets: only where the kernel's work per op is small enough for a process start-up to show. */
const EXEC_TARGET = { alias: { min: 20 }, updown: { min: 20 } };

const ip = (args, input) => execFileSync('ip', args, { input, stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'] });

/** A standalone virtual link kind this kernel has: dummy, else ifb (same shape: no peer, no parent). */
function linkKind(ns) {
  for (const kind of ['dummy', 'ifb']) {
    try {
      ip(['-n', ns, 'link', 'add', 'probe0', 'type', kind]);
      ip(['-n', ns, 'link', 'del', 'probe0']);
      return kind;
    } catch {
      // not built into this kernel
    }
  }
  throw new Error('neither dummy nor ifb links are available');
}

export default async function netBench(ctx) {
  let net;
  try {
    net = require('../dist/net/index.js');
  } catch (err) {
    throw new Error(`dist/ is not built (run: npm run build): ${err.message}`);
  }
  const prefix = 'sb' + randomBytes(2).toString('hex');
  const nsA = `${prefix}a`;
  const nsB = `${prefix}b`;
  const opened = [];
  try {
    ip(['netns', 'add', nsA]);
    ip(['netns', 'add', nsB]);
    const kind = linkKind(nsA);
    const names = Array.from({ length: LINKS }, (_, i) => `${prefix}l${i}`);
    const altNames = names.map((_, i) => `${prefix}r${i}`);
    ip(['-n', nsA, '-batch', '-'], names.map((n) => `link add ${n} type ${kind}\n`).join(''));

    const A = net.openNetns(`/var/run/netns/${nsA}`);
    const B = net.openNetns(`/var/run/netns/${nsB}`);
    opened.push(A, B);
    const rtnlA = net.connect(A);
    const rtnlB = net.connect(B);
    opened.push(rtnlA, rtnlB);
    const byName = new Map(rtnlA.listLinks().map((l) => [l.name, l.index]));
    const index = names.map((n) => byName.get(n));
    ctx.log(`${LINKS} ${kind} links in ${nsA}; ${ROUNDS} rounds (${MOVE_ROUNDS} for move)`);

    let tag = 0;
    // Each op: phases of `LINKS` changes; every contender runs all phases, so the per-op cost is
    // total / (phases × LINKS). `lines(p)` are the iproute2 commands, `ns(p)` where they run.
    const ops = {
      alias: {
        phases: 1,
        ns: () => nsA,
        lines: (_p, t) => names.map((n, i) => ['link', 'set', 'dev', n, 'alias', `${t}-${i}`]),
        addon: (_p, t) => index.forEach((x, i) => rtnlA.setLink(x, { alias: `${t}-${i}` })),
      },
      updown: {
        phases: 2,
        ns: () => nsA,
        lines: (p) => names.map((n) => ['link', 'set', 'dev', n, p === 0 ? 'up' : 'down']),
        addon: (p) => index.forEach((x) => rtnlA.setLink(x, { up: p === 0 })),
      },
      rename: {
        phases: 2,
        ns: () => nsA,
        lines: (p) => names.map((n, i) => (p === 0 ? ['link', 'set', 'dev', n, 'name', altNames[i]] : ['link', 'set', 'dev', altNames[i], 'name', n])),
        addon: (p) => index.forEach((x, i) => rtnlA.setLink(x, { name: p === 0 ? altNames[i] : names[i] })),
      },
      move: {
        phases: 2,
        ns: (p) => (p === 0 ? nsA : nsB),
        lines: (p) => names.map((n) => ['link', 'set', 'dev', n, 'netns', p === 0 ? nsB : nsA]),
        // The ifindex is kept across a move when it is free in the target (it is: B holds only lo),
        // so no re-resolve between the two directions.
        addon: (p) => (p === 0 ? index.forEach((x) => rtnlA.moveLink(x, B)) : index.forEach((x) => rtnlB.moveLink(x, A))),
      },
    };

    const contenders = {
      addon: (op, t) => {
        for (let p = 0; p < op.phases; p++) op.addon(p, t);
      },
      'ip-exec': (op, t) => {
        for (let p = 0; p < op.phases; p++) for (const args of op.lines(p, t)) ip(['-n', op.ns(p), ...args]);
      },
      'ip-batch': (op, t) => {
        for (let p = 0; p < op.phases; p++) ip(['-n', op.ns(p), '-batch', '-'], op.lines(p, t).map((a) => a.join(' ') + '\n').join(''));
      },
    };

    for (const [opName, op] of Object.entries(ops)) {
      const perOp = { addon: [], 'ip-exec': [], 'ip-batch': [] };
      const rounds = opName === 'move' ? MOVE_ROUNDS : ROUNDS;
      contenders.addon(op, `w${tag++}`); // warm-up (JIT, kernel caches), not measured
      for (let round = 0; round < rounds; round++) {
        for (const name of rotate(Object.keys(contenders), round)) {
          const t = `${name[4] ?? 'a'}${tag++}`;
          const ms = await timeMs(() => contenders[name](op, t));
          perOp[name].push((ms * 1000) / (op.phases * LINKS));
        }
      }
      const m = Object.fromEntries(Object.entries(perOp).map(([k, v]) => [k, median(v)]));
      ctx.log(`${opName}: per op addon ${m.addon.toFixed(1)} µs, ip-batch ${m['ip-batch'].toFixed(1)} µs, ip-exec ${m['ip-exec'].toFixed(1)} µs`);
      ctx.ratio(`addon/ip-batch:${opName}`, m.addon / m['ip-batch'], { max: 1.2 }, roundRatios(perOp.addon, perOp['ip-batch']));
      ctx.ratio(`ip-exec/addon:${opName}`, m['ip-exec'] / m.addon, EXEC_TARGET[opName] ?? {}, roundRatios(perOp['ip-exec'], perOp.addon));
    }

    // the contenders really did the work: every link is home, under its name, with its index
    const after = new Map(rtnlA.listLinks().map((l) => [l.name, l.index]));
    const lost = names.filter((n, i) => after.get(n) !== index[i]);
    if (lost.length) throw new Error(`links not back in place after the bench: ${lost.slice(0, 5).join(', ')}…`);
  } finally {
    for (const h of opened.reverse()) {
      try {
        h.close();
      } catch {
        // already closed
      }
    }
    // deleting the namespaces destroys every virtual link in them
    for (const ns of [nsB, nsA]) {
      try {
        ip(['netns', 'del', ns]);
      } catch {
        // not created
      }
    }
  }
}
