// The field tier tests what `npm run package` built: refuse to run (rather than skip) without it.
import { missingPackage } from './packaged';

export default function setup(): void {
  const missing = missingPackage();
  if (missing) throw new Error(`${missing} is missing: run npm run package before npm run test:field`);
}
