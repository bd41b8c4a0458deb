// Runs inside the lab VM (see capture-vf-table.sh): a netdevsim PF with N VFs carrying distinct values, and the
// kernel's raw RTM_NEWLINK reply for it written to <dir>/vf-table-<N>.bin, with the values set in
// <dir>/vf-table-<N>.json — a real capture for the addon's parser tests (over ~220 VFs the IFLA_VFINFO_LIST
// nest is longer than its 16-bit nla_len can say, and the kernel wraps it).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { NetdevsimPf } = require('../lib/netdevsim');
const { iproute2SetVfs } = require('../lib/iproute2-vf');
const { distinctTable } = require('../lib/vf-settings');
const { sh } = require('../lib/shell');

async function main() {
  const [count, dir] = [Number(process.argv[2] || 256), process.argv[3]];
  if (!fs.existsSync('/sys/bus/netdevsim')) sh('modprobe', ['netdevsim']);
  const pf = await NetdevsimPf.create({ name: 'capture0', numVfs: count });
  try {
    const values = distinctTable(0x25, count);
    iproute2SetVfs(pf.name, values);
    const bin = path.join(dir, `vf-table-${count}.bin`);
    sh('python3', [path.join(__dirname, 'rtnl-getlink-raw.py'), String(pf.index), bin]);
    const expected = { ifindex: pf.index, name: pf.name, numVfs: count, vfs: values };
    fs.writeFileSync(path.join(dir, `vf-table-${count}.json`), JSON.stringify(expected, null, 1) + '\n');
    console.log(`captured ${fs.statSync(bin).size} bytes: ${bin}`);
  } finally {
    pf.destroy();
  }
}

main().catch((err) => {
  console.error(err.message);
  process.exitCode = 1;
});
