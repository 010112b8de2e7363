/**
 * `npm run addon:zip`: packs blender_addon/ into dist/autorig_blender.zip, installable with Blender's
 * "Install add-on" (3.x–4.1, reads bl_info) and "Install from Disk" (4.2+, reads blender_manifest.toml).
 * Files go under one top folder `autorig/` (the add-on's module name). Pure Node (zlib deflate + the CRC-32 of io/png.ts),
 * deterministic (sorted entries, fixed timestamps), and only the add-on's own files: no paths of the building
 * machine end up in the zip.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { deflateRawSync } from 'node:zlib';
import { crc32 } from '../io/png.js';

export const ADDON_MODULE = 'autorig';
export const ZIP_NAME = 'autorig_blender.zip';

export interface ZipEntry {
  /** path inside the zip, forward slashes */
  name: string;
  data: Uint8Array;
}


/** DOS date/time of 1980-01-01 00:00: fixed, so the same sources give the same zip. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

/** A zip archive (deflate, or stored when deflate does not help) of the entries, in the given order. */
export function zipArchive(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const deflated = deflateRawSync(entry.data, { level: 9 });
    const stored = deflated.length >= entry.data.length;
    const body = stored ? Buffer.from(entry.data) : deflated;
    const crc = crc32(entry.data);
    const method = stored ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0 (so the mode below is read)
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((0o100644 << 16) >>> 0), 38); // regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const centralSize = centrals.reduce((sum, b) => sum + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

/** What an add-on is made of: anything else in the folder (a stray .env, notes, caches) is never shipped. */
const SHIPPED_EXTENSIONS = ['.py', '.toml', '.md'];

/** The add-on's files (relative paths, sorted): sources and manifest only, no caches, dotfiles or editor leftovers. */
export function addonFiles(addonDir: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === '__pycache__' || name.startsWith('.') || name.endsWith('.pyc') || name.endsWith('~')) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (SHIPPED_EXTENSIONS.some((e) => name.endsWith(e))) files.push(relative(addonDir, path).split(sep).join('/'));
    }
  };
  walk(addonDir);
  return files;
}

/** Build the zip from `<root>/blender_addon` into `out`; returns the names inside it. */
export function buildAddonZip(root: string, out: string): string[] {
  const addonDir = join(root, 'blender_addon');
  const entries = addonFiles(addonDir).map((file) => ({
    name: `${ADDON_MODULE}/${file}`,
    data: readFileSync(join(addonDir, file)),
  }));
  if (!entries.some((e) => e.name === `${ADDON_MODULE}/__init__.py`)) throw new Error(`${addonDir} has no __init__.py`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, zipArchive(entries));
  return entries.map((e) => e.name);
}

/** The repository root: nearest folder above this module with blender_addon/ (works from sources and dist/). */
export function repoRoot(start: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = resolve(start);
  for (;;) {
    try {
      if (statSync(join(dir, 'blender_addon', '__init__.py')).isFile()) return dir;
    } catch {
      // not here: go up
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no blender_addon/ above ${start}`);
    dir = parent;
  }
}

export function main(args: string[]): number {
  const root = repoRoot();
  const out = resolve(args[0] ?? join(root, 'dist', ZIP_NAME));
  const names = buildAddonZip(root, out);
  process.stdout.write(`wrote ${out} (${names.length} files)\n`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
