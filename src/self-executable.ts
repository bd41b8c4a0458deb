// The self-contained executable this process runs from, if it is one (Node's single executable application);
// null when sriovctl runs on a Node.js installation (npm, a checkout), where process.execPath is node itself.
export function selfExecutable(): string | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sea = require('node:sea') as { isSea(): boolean };
    return sea.isSea() ? process.execPath : null;
  } catch {
    // Node.js before 20.12 has no node:sea, and runs no single executable either
    return null;
  }
}
