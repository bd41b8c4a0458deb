// A stand-in Rtnl for unit tests of the engine's pure decisions: the given synchronous operations, and their steps
// forms (Rtnl.steps) made from them, as the real connection makes its own.
import type { Rtnl } from '../../src/net/types';
import { slowly } from '../../src/util/wait';

export function fakeRtnl(ops: Partial<Record<keyof Rtnl, unknown>>): Rtnl {
  const rtnl: Record<string, unknown> = { ...ops };
  // through the fake itself, so that a test replacing one of its operations sees its steps use the replacement
  const call = (name: string, args: unknown[]) => (rtnl[name] as (...a: unknown[]) => unknown)(...args);
  const steps = new Proxy(
    {},
    {
      get: (_, name: string) =>
        function* (...args: unknown[]) {
          return yield* slowly({ inPlace: () => call(name, args), offThread: async () => call(name, args) });
        },
    },
  );
  rtnl.steps = steps;
  return rtnl as unknown as Rtnl;
}
