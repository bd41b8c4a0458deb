// The announcements a namespace's interfaces send and receive (gratuitous ARP, IPv6 neighbour advertisements),
// seen by tools/announce-capture.py — a packet socket, independent of the code under test.
//
//   const cap = await captureAnnouncements(ctx, { netns: pod });       // every interface of the pod
//   const cap = await captureAnnouncements(ctx, { ifname: pf.name });  // one interface here (may be down)
//   cap.seen()                        // [{ kind: 'garp'|'na', ip, ifname, dir: 'outgoing'|'broadcast'|..., ... }]
//   await cap.waitFor((a) => ..., 'what') // the first announcement matching, or throws after a bound
'use strict';

const path = require('node:path');
const { spawn } = require('node:child_process');
const { poll } = require('./shell');

const TOOL = path.join(__dirname, '..', 'tools', 'announce-capture.py');
// the tool's own time limit: a hang guard only, the scenario stops it
const TOOL_LIMIT_S = 300;

async function captureAnnouncements(ctx, { netns, ifname } = {}) {
  const toolArgs = [TOOL, String(TOOL_LIMIT_S), ...(ifname ? [ifname] : [])];
  const [cmd, args] = netns ? ['ip', ['netns', 'exec', netns, 'python3', ...toolArgs]] : ['python3', toolArgs];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  ctx.defer(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  const lines = [];
  let partial = '';
  let stderr = '';
  let ready = false;
  child.stdout.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop();
    for (const l of parts) {
      if (l === 'ready') ready = true;
      else if (l.trim()) lines.push(JSON.parse(l));
    }
  });
  child.stderr.on('data', (d) => (stderr += d));
  const where = netns ? `namespace ${netns}` : ifname;
  const alive = () => child.exitCode === null && child.signalCode === null;
  if (!(await poll(() => ready || !alive(), { timeoutMs: 30_000, intervalMs: 20 })) || !ready) {
    throw new Error(`the capture on ${where} did not start: ${stderr.trim()}`);
  }
  return {
    seen: () => [...lines],
    async waitFor(match, what, timeoutMs = 15_000) {
      const found = await poll(() => lines.find(match) ?? (alive() ? null : 'dead'), { timeoutMs, intervalMs: 20 });
      if (found === 'dead') throw new Error(`the capture on ${where} ended: ${stderr.trim()}`);
      if (!found) throw new Error(`no ${what} seen on ${where} within ${timeoutMs} ms; seen: ${JSON.stringify(lines)}`);
      return found;
    },
  };
}

module.exports = { captureAnnouncements };
