// The CniError a call throws (failing the test when it throws anything else, or nothing).
import { expect } from 'vitest';
import { CniError } from '../../src/cni/errors';

export function failure(fn: () => unknown): CniError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CniError);
    return err as CniError;
  }
  throw new Error('expected a CniError');
}

/** The CniError a promise rejects with (failing the test when it rejects with anything else, or resolves). */
export async function rejection(p: Promise<unknown>): Promise<CniError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CniError);
    return err as CniError;
  }
  throw new Error('expected a CniError');
}
