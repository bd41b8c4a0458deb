// No leak: 100 000 get/set operations grow RSS by < 5 MiB and leave the fd count unchanged.
import { readdirSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, expect, it } from 'vitest';
import { SysError, connect, openNetns } from '../../src/net';
import { Scratch } from '../helpers/kernel';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const scratch = new Scratch();
afterEach(() => scratch.cleanup());

const fdCount = () => readdirSync('/proc/self/fd').length;

function settle(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().rss;
}

it('100 000 get/set operations: RSS grows < 5 MiB, fd count unchanged', async () => {
  const name = scratch.netns('lk');
  const ns = openNetns(`/var/run/netns/${name}`);
  scratch.onCleanup(() => ns.close());
  const [a] = scratch.veth('a', 'b', name);
  const rtnl = connect(ns);
  scratch.onCleanup(() => rtnl.close());
  const index = rtnl.getLink({ name: a }).index;

  const round = async (n: number) => {
    for (let i = 0; i < n; i++) {
      rtnl.setLink(index, { alias: `leak-check-${i % 64}` });
      rtnl.getLink({ index });
      if (i % 100 === 0) {
        // errors allocate too: the SysError path must not leak either
        try {
          rtnl.getLink({ index: 0x7ffffff0 });
        } catch (err) {
          if (!(err instanceof SysError)) throw err;
        }
      }
    }
    // and the promise path, in batches
    for (let i = 0; i < n / 20; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => (j % 2 ? rtnl.async.getLink({ index }) : rtnl.async.setLink(index, { alias: `async-${j}` }))));
    }
  };

  await round(5_000); // warm-up: JIT, buffers, the libuv pool
  const fds = fdCount();
  const rss = settle();
  const t0 = Date.now();
  await round(47_500); // 95 000 sync + 2 375 async + 475 failing ops ≥ 100 000 with the warm-up
  const elapsed = Date.now() - t0;
  const grown = settle() - rss;
  expect(fdCount()).toBe(fds);
  expect(grown).toBeLessThan(5 * 1024 * 1024);
  console.log(`net-leak: ${elapsed} ms, RSS +${(grown / 1024).toFixed(0)} KiB`);
});
