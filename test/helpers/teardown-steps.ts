// Teardown that tries every step whatever failed before it, then reports every failure at once: what a test
// leaves behind must be removed even when one removal fails.
export class TeardownSteps {
  private readonly errors: string[] = [];

  /** Run `fn`; a failure is remembered under `what`, never thrown here. */
  async attempt(what: string, fn: () => unknown): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.errors.push(`${what}: ${(err as Error).message}`);
    }
  }

  /** Throw one error naming every failed step (prefixed by `who`), if any failed. */
  throwIfFailed(who: string): void {
    if (this.errors.length) throw new Error(`${who}: ${this.errors.join('; ')}`);
  }
}
