// The payload install-cni writes (src/package/payload-layout.ts), from the self-contained executable: the executable
// itself, and the launcher and private glibc `npm run package` embedded in it as assets (listed in payload.json);
// and the static native shim (native/shim/) it embedded too, which install-cni puts in front of the payload.
import { PAYLOAD_EXECUTABLE, PAYLOAD_LAUNCHER, PAYLOAD_LIB_DIR } from '../package/payload-layout';
import type { Content } from './content';
import type { PayloadFile } from './install-plugin';

/** What the manifest may name: the launcher, or a file directly in lib/. */
const PAYLOAD_PATH = new RegExp(`^(${PAYLOAD_LAUNCHER}|${PAYLOAD_LIB_DIR}/[\\w.+-]+)$`);

export interface PackagedPayload {
  files: PayloadFile[];
  /** The payload's one-shot launcher (sriovctl.d/oneshot). */
  launcher: Content;
  /** The shim of this executable's architecture: the daemon's client, falling back to the launcher. */
  shim: Content;
}

export function packagedPayload(executable: string): PackagedPayload {
  // required here: node:sea exists only in the executable (and Node >= 20.12), build-info's constants only in its build
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { seaAsset, seaAssetText } = require('../sea/assets') as typeof import('../sea/assets');
  const { ASSET } = require('../sea/build-info') as typeof import('../sea/build-info');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const manifest = JSON.parse(seaAssetText(ASSET.payloadManifest)) as { files: string[] };
  const bad = manifest.files.find((p) => !PAYLOAD_PATH.test(p));
  if (bad !== undefined) throw new Error(`the executable's payload manifest names ${JSON.stringify(bad)}: rebuild it (npm run package)`);
  const files: PayloadFile[] = [
    { path: PAYLOAD_EXECUTABLE, content: { file: executable } },
    ...manifest.files.map((path) => ({ path, content: { data: new Uint8Array(seaAsset(`${ASSET.payloadPrefix}${path}`)) } })),
  ];
  const launcher = files.find((f) => f.path === PAYLOAD_LAUNCHER);
  if (!launcher) throw new Error(`the executable carries no ${PAYLOAD_LAUNCHER} launcher: rebuild it (npm run package)`);
  let shim: Content;
  try {
    shim = { data: new Uint8Array(seaAsset(ASSET.shim)) };
  } catch {
    throw new Error(`the executable carries no ${ASSET.shim} asset: rebuild it (npm run package)`);
  }
  return { files, launcher: launcher.content, shim };
}
