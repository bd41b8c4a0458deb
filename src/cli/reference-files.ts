// The generated reference files, by path in the repository, each with what makes it (see reference.ts).
import { commandReference, sriovctlCniManPage, sriovctlManPage } from './reference';

export const REFERENCE_FILES: Readonly<Record<string, () => string>> = {
  'docs/commands.md': () => commandReference(),
  'man/sriovctl.1': () => sriovctlManPage(),
  'man/sriovctl-cni.8': () => sriovctlCniManPage(),
};
