// Small, forgiving readers for sysfs attributes and links: a missing entry is an answer (null / []), not an error.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The attribute's text without the trailing newline, or null when it does not exist or cannot be read. */
export function readAttr(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').replace(/\n$/, '');
  } catch {
    return null;
  }
}

/** A decimal attribute, or null when absent or not a number. */
export function readIntAttr(file: string): number | null {
  const text = readAttr(file);
  if (text === null || !/^\s*\d+\s*$/.test(text)) return null;
  return Number(text.trim());
}

/** The last component of a symlink's target ('driver' -> '../../bus/pci/drivers/iavf' gives 'iavf'), or null. */
export function readLinkName(link: string): string | null {
  try {
    return path.basename(fs.readlinkSync(link));
  } catch {
    return null;
  }
}

/** Entries of a directory, or [] when it does not exist. */
export function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

export function exists(p: string): boolean {
  return fs.existsSync(p);
}

/** The canonical path, or null when it does not resolve. */
export function realPath(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}
