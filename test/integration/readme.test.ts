// The README is the first screen a newcomer reads: short, its quick start runs as written, and every link into
// docs/ (and between the docs) reaches a file, and a heading where it names one.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../helpers/cli-process';

const README = path.join(REPO, 'README.md');
const DOCS = path.join(REPO, 'docs');

/** The commands of the first ```sh block under `## Quick start`, comments dropped, `sudo` too (tests run as root). */
function quickStart(): string[] {
  const text = fs.readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('\n## Quick start\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1];
  return block
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((l) => l.replace(/(^|&& )sudo /g, '$1'));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

function linksOf(file: string): { target: string; anchor: string | null }[] {
  const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((l) => !/^[a-z]+:/.test(l))
    .map((l) => {
      const [target, anchor] = l.split('#');
      return { target: target ? path.resolve(path.dirname(file), target) : file, anchor: anchor ?? null };
    });
}

describe('README', () => {
  it('is at most 200 lines', () => {
    expect(fs.readFileSync(README, 'utf8').split('\n').length).toBeLessThanOrEqual(200);
  });

  it("its first screen says what it is, with the picture of lend, record, give back; then the sections a newcomer needs", () => {
    const text = fs.readFileSync(README, 'utf8');
    // a terminal's first screen: the title, what it does, and the picture, before any section starts
    const firstScreen = text.split('\n').slice(0, 24).join('\n');
    expect(firstScreen).not.toContain('\n## ');
    expect(firstScreen).toMatch(/^# sriovctl\n\nsriovctl lends SR-IOV NICs/);
    const picture = /```\n([\s\S]*?)```/.exec(firstScreen)?.[1] ?? '';
    expect(picture).toMatch(/record[\s\S]*lend[\s\S]*give back/);
    const headings = text.split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3));
    for (const h of ['Requirements', 'Quick start', 'From the shell commands you know', 'The CNI plugin: one config for each mode', 'Give the NICs back after every CI job', 'Documentation']) {
      expect(headings).toContain(h);
    }
    // the cheat sheet starts from what these users type today
    const cheat = text.slice(text.indexOf('\n## From the shell commands you know\n'));
    const known = cheat.slice(0, cheat.indexOf('\n## ', 1)).split('\n').filter((l) => l.startsWith('| ')).map((l) => l.split('|')[1]);
    for (const today of [/ip link set \S+ netns \S+/, /echo \d+ > \S*sriov_numvfs/, /ip link set \S+ vf \d+/, /kubevirtci/, /make cluster-down/]) {
      expect(known.some((cell) => today.test(cell)), String(today)).toBe(true);
    }
  });

  it('every link of the README and of docs/ reaches a file, and its heading', () => {
    const files = [README, ...fs.readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => path.join(DOCS, f))];
    const broken: string[] = [];
    for (const file of files) {
      for (const { target, anchor } of linksOf(file)) {
        if (!fs.existsSync(target)) broken.push(`${path.relative(REPO, file)}: ${path.relative(REPO, target)}`);
        else if (anchor !== null) {
          const headings = fs.readFileSync(target, 'utf8').split('\n').filter((l) => /^#+ /.test(l)).map((l) => anchorOf(l.replace(/^#+ /, '')));
          if (!headings.includes(anchor)) broken.push(`${path.relative(REPO, file)}: ${path.relative(REPO, target)}#${anchor}`);
        }
      }
    }
    expect(broken).toEqual([]);
    // the README leads into each of the docs
    const fromReadme = new Set(linksOf(README).map((l) => path.relative(REPO, l.target)));
    for (const doc of fs.readdirSync(DOCS).filter((f) => f.endsWith('.md'))) expect(fromReadme).toContain(`docs/${doc}`);
  });

  it('its quick start runs as written: npm ci && npm test (this run), then npm start, leaving no state dir (not even /var/lib/sriovctl)', () => {
    assertBuilt();
    const commands = quickStart();
    // npm ci built the tree under test and npm test is this very run (.ci/run calls it as written); run again here,
    // npm ci would replace the node_modules this run uses
    expect(commands).toEqual(['npm ci && npm test', 'npm ci && npm start']);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-readme-'));
    const seen = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-readme-var-lib-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
      delete env.SRIOVCTL_STATE_DIR;
      delete env.SRIOVCTL_SYSFS_ROOT;
      const command = commands[1].split(' && ')[1].split(' ');
      // in a mount namespace of its own whose /var/lib starts empty, so what it leaves there (the default state dir)
      // is seen whatever this machine's /var/lib holds, and written nowhere else
      const inOwnVarLib = ['-m', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs tmpfs /var/lib && "$@"; rc=$?; ls -A /var/lib > "$SEEN/var-lib"; exit $rc', 'sh'];
      const r = spawnSync('unshare', [...inOwnVarLib, ...command], { cwd: REPO, env: { ...env, SEEN: seen }, encoding: 'utf8', timeout: 300_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.trimEnd().split('\n').pop()).toBe('demo: every NIC came back with its name, MAC and MTU; nothing left behind');
      expect(fs.readdirSync(tmp)).toEqual([]);
      expect(fs.readFileSync(path.join(seen, 'var-lib'), 'utf8')).toBe('');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.rmSync(seen, { recursive: true, force: true });
    }
  });
});
