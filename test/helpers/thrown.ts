/** What `fn` throws; a test whose call throws nothing fails here. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure, nothing was thrown');
}
