// Run by lend-hostile-neighbour.test.ts with a pause point set: cleanup's stray scan, excluding the namespace named
// by argv (a path), in its own process so the test can act while the scan is held. One JSON line on stdout: the
// strays found, by device address and the path they were found through.
import { scanForStrays } from '../../src/lend/stray-scan';
import { loadConfig } from '../../src/config';
import { openSession } from '../../src/lend';
import { statNetnsId } from '../../src/net';

const [stateDir, sysfsRoot, excludedPath] = process.argv.slice(2);
const s = openSession(loadConfig(process.env, { stateDir, sysfsRoot }));
try {
  const scan = scanForStrays(s, [statNetnsId(excludedPath)!]);
  process.stdout.write(JSON.stringify(scan.strays.map((x) => ({ pciAddress: x.pciAddress, from: x.netnsPath }))) + '\n');
  scan.close();
} finally {
  s.close();
}
