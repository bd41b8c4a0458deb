// The assets `npm run package` embedded in the executable (node:sea, Node 20.12+).
import { getAsset } from 'node:sea';

export function seaAsset(name: string): ArrayBuffer {
  return getAsset(name);
}

export function seaAssetText(name: string): string {
  return getAsset(name, 'utf8');
}
