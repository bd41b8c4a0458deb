// sriovctl-cni: the entry point esbuild bundles into dist/sriovctl-cni.bundle.js.
// Start-up is most of this plugin's cost, so this file loads only what VERSION needs; every other verb loads
// the protocol (./run), and each verb's own module (with it the native addon), when it runs.
import { writeStdout } from './stdio';
import { versionReply } from './versions';

export function main(): number {
  if (process.env.CNI_COMMAND === 'VERSION') {
    writeStdout(versionReply());
    return 0;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy: VERSION must not pay for it
  return (require('./run') as typeof import('./run')).run();
}
