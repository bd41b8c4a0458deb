// `npm install -g` installs the man pages sriovctl(1) and sriovctl-cni(8): the package holds them (npm pack's file
// list) and npm links them where man finds them. The install is of a copy holding the package's bin/ and man/ and
// its package.json without dependencies (nothing fetched), into a prefix of the test's: npm's own linking of the
// package's "man" field is what is checked, not the build.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli-process';

const PAGES = [
  ['1', 'sriovctl'],
  ['8', 'sriovctl-cni'],
] as const;

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-npm-man-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const npm = (args: string[], cwd: string) => execFileSync('npm', [...args, '--ignore-scripts', '--no-audit', '--no-fund'], { cwd, encoding: 'utf8', timeout: 120_000 });

describe('npm install -g', () => {
  it('the package holds both man pages', () => {
    const [pack] = JSON.parse(npm(['pack', '--dry-run', '--json'], REPO)) as { files: { path: string }[] }[];
    const files = pack.files.map((f) => f.path);
    for (const [section, name] of PAGES) expect(files).toContain(`man/${name}.${section}`);
  });

  it('installs them where man finds them, with the commands', () => {
    const pkg = path.join(tmp, 'pkg');
    fs.mkdirSync(pkg);
    for (const dir of ['bin', 'man']) fs.cpSync(path.join(REPO, dir), path.join(pkg, dir), { recursive: true });
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const k of ['dependencies', 'devDependencies', 'scripts']) delete manifest[k];
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify(manifest));
    const prefix = path.join(tmp, 'prefix');
    npm(['install', '-g', '--offline', '--prefix', prefix, pkg], tmp);
    expect(fs.readdirSync(path.join(prefix, 'bin')).sort()).toEqual(['sriovctl', 'sriovctl-cni']);
    for (const [section, name] of PAGES) {
      const where = execFileSync('man', ['-w', section, name], { env: { ...process.env, MANPATH: path.join(prefix, 'share', 'man') }, encoding: 'utf8' }).trim();
      const installed = path.join(prefix, 'share', 'man', `man${section}`, `${name}.${section}`);
      expect(fs.existsSync(installed)).toBe(true);
      // man names the file a link there leads to
      expect(where).toBe(fs.realpathSync(installed));
      // the page npm installed is the one in the tree, and it renders without a warning
      expect(fs.readFileSync(where, 'utf8')).toBe(fs.readFileSync(path.join(REPO, 'man', `${name}.${section}`), 'utf8'));
      const rendered = execFileSync('sh', ['-c', `MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null`, 'sh', where], { encoding: 'utf8' });
      expect(rendered).toBe('');
    }
  });
});
