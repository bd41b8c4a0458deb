// V8 accepts a code cache that fits only the *length* of the source, so a cache is code that runs as
// root. `sriovctl` (bin/sriovctl.js) must read its cache only from a directory nobody else can write: a cache
// planted in a state dir another user owns is never run. The control shows the planted cache is a working
// attack: the same file in a root-owned directory does run (only root could have put it there).
import { execFileSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheName, fileKey } from '../../src/package/code-cache';
import { assertBuilt, REPO, sriovctl } from '../helpers/cli-process';

const BUNDLE = join(REPO, 'dist', 'sriovctl-run.bundle.js');
const NOBODY = 65534;

/** A V8 cache for a same-length source that writes `marker` when run, made by this Node without flags. */
function plantedCache(marker: string): Buffer {
  const real = readFileSync(BUNDLE, 'utf8');
  const evil = `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');/*`;
  const source = evil + ' '.repeat(real.length - evil.length - 2) + '*/';
  expect(source.length).toBe(real.length);
  const make = `
    const { Script } = require('node:vm');
    const src = require('node:fs').readFileSync(0, 'utf8');
    const s = new Script('(function (exports, require, module, __filename, __dirname) {' + src + '\\n})', { filename: 'x' });
    process.stdout.write(s.createCachedData());`;
  return execFileSync(process.execPath, ['-e', make], { input: source, maxBuffer: 64 << 20 });
}

describe('the CLI code cache is trusted only from a trusted directory', () => {
  let root: string;
  beforeEach(() => {
    assertBuilt();
    root = mkdtempSync(join(tmpdir(), 'sriovctl-h1-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** A state dir owned by `uid` holding a planted cache under the name the CLI looks for; runs `status`. */
  async function statusWithPlantedCache(uid: number): Promise<{ ran: boolean; code: number | null; stdout: string; stderr: string }> {
    const state = join(root, `state-${uid}`);
    const cacheDir = join(state, 'cli', 'code-cache');
    mkdirSync(cacheDir, { recursive: true, mode: 0o755 });
    const marker = join(root, `ran-${uid}`);
    const fd = openSync(BUNDLE, 'r');
    try {
      writeFileSync(join(cacheDir, cacheName(BUNDLE, fileKey(fd))), plantedCache(marker));
    } finally {
      closeSync(fd);
    }
    for (const d of [state, join(state, 'cli'), cacheDir]) chownSync(d, uid, uid);
    const r = await sriovctl({ stateDir: state, sysfsRoot: root }, ['status', '--json']);
    return { ran: existsSync(marker), code: r.code, stdout: r.stdout, stderr: r.stderr };
  }

  it('never runs a cache planted in a state dir another user owns (and refuses that state dir)', async () => {
    const r = await statusWithPlantedCache(NOBODY);
    expect(r.ran).toBe(false);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/is not trusted/);
  });

  it('(control) the same planted cache in a root-owned dir is run: the attack is real, ownership is the guard', async () => {
    const r = await statusWithPlantedCache(0);
    expect(r.ran).toBe(true);
  });
});
