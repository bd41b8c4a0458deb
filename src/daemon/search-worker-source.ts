// The namespace search worker's script in the packaged executable. There the daemon is an embedded bundle with no
// file beside it, so without the worker's own embedded bundle every search of the machine — a DEL's through a
// hostile neighbour's directories among them — ran on the daemon's thread and held up every other call.
import { isSea } from '../package/self-executable';

/** The worker's bundle as text in the packaged executable; null elsewhere (the script beside the code is used). */
export function embeddedSearchWorker(): string | null {
  if (!isSea()) return null;
  // required here: node:sea exists only in the executable (and Node >= 20.12), build-info's constants only in its build
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { seaAssetText } = require('../sea/assets') as typeof import('../sea/assets');
  const { ASSET } = require('../sea/build-info') as typeof import('../sea/build-info');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return seaAssetText(ASSET.searchWorker);
}
