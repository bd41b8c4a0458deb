// The hostile neighbour's own program (test/helpers/hostile-neighbour.ts, bench/hostile-neighbour.bench.mjs): run
// as nobody inside user, mount and network namespaces of its own (setpriv … unshare -Urmn), it mounts a tmpfs on
// its /run, plants what its plan (argv[2], JSON) says in /run/netns, says "ready", then flips its link or sleeps
// until killed.
'use strict';
const fs = require('fs');
const { execFileSync } = require('child_process');
const plan = JSON.parse(process.argv[2]);
execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512m,nr_inodes=0', 'tmpfs', '/run']);
const dir = '/run/netns';
fs.mkdirSync(dir);
for (let i = 0; i < (plan.files || 0); i++) fs.closeSync(fs.openSync(dir + '/junk' + i, 'w'));
const fifos = Array.from({ length: plan.fifos || 0 }, (_, i) => dir + '/fifo' + i);
for (let i = 0; i < fifos.length; i += 500) execFileSync('mkfifo', fifos.slice(i, i + 500));
for (const [name, target] of Object.entries(plan.links || {})) fs.symlinkSync(target, dir + '/' + name);
if (plan.loop) fs.symlinkSync(dir + '/loop', dir + '/loop');
if (plan.bindOwnNetns) {
  fs.closeSync(fs.openSync(dir + '/own', 'w'));
  execFileSync('mount', ['--bind', '/proc/self/ns/net', dir + '/own']);
}
if (plan.bindSecondNetns) {
  // a namespace no process is in, bound only at /run/ns2 (outside /run/netns): reached only through a link to it
  fs.closeSync(fs.openSync('/run/ns2', 'w'));
  execFileSync('unshare', ['-n', 'mount', '--bind', '/proc/self/ns/net', '/run/ns2']);
}
fs.writeFileSync('/run/flips', '0');
fs.writeFileSync('/run/plain', 'a file of its own, not a namespace\n');
process.stdout.write('ready\n');
if (plan.flip) {
  const { name, a, b } = plan.flip;
  const tmp = dir + '/.' + name;
  let n = 0;
  for (;;) {
    fs.symlinkSync(n % 2 ? b : a, tmp);
    fs.renameSync(tmp, dir + '/' + name);
    if (++n % 1000 === 0) {
      // whole or not at all: a reader never sees the file empty
      fs.writeFileSync('/run/flips.new', String(n));
      fs.renameSync('/run/flips.new', '/run/flips');
    }
  }
} else {
  // SIGUSR1 puts /run/netns out of the way, SIGUSR2 back (a bench's "alone" rounds): only we may rename in our tmpfs
  process.on('SIGUSR1', () => fs.renameSync(dir, dir + '-away'));
  process.on('SIGUSR2', () => fs.renameSync(dir + '-away', dir));
  // SIGHUP points its flipOnSignal link elsewhere once, when a test says (only we may write in our tmpfs)
  if (plan.flipOnSignal) {
    const { name, to } = plan.flipOnSignal;
    process.on('SIGHUP', () => {
      fs.symlinkSync(to, dir + '/.' + name);
      fs.renameSync(dir + '/.' + name, dir + '/' + name);
      fs.writeFileSync('/run/flipped', '');
    });
  }
  if (plan.churn) {
    // an entry made and removed every few milliseconds: the directory is never the same twice (its mtime moves), so
    // a reader that skips a directory while it is unchanged must read it again each time (within its bounds)
    let n = 0;
    setInterval(() => {
      try {
        fs.closeSync(fs.openSync(dir + '/churn' + (n % 2), 'w'));
        fs.rmSync(dir + '/churn' + ((n + 1) % 2), { force: true });
        n++;
      } catch {
        // put out of the way (SIGUSR1) meanwhile
      }
    }, 2);
  }
  setInterval(() => {}, 1 << 30);
}
