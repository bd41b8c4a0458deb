// The SysError a promise rejects with (failing the test when it rejects with anything else, or resolves).
import { isSysError, type SysError } from '../../src/errors';

export async function sysErrorOf(p: Promise<unknown>): Promise<SysError> {
  try {
    await p;
  } catch (err) {
    if (isSysError(err)) return err;
    throw err;
  }
  throw new Error('expected a SysError');
}
