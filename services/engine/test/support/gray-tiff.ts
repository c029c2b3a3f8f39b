import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';

/** Gray pixels of a PDF's first page as pdftoppm renders them (a PGM, parsed here). */
export function grayPixelsOf(pdf: Buffer, dpi = 150): { width: number; height: number; pixels: Buffer } {
  const folder = mkdtempSync(join(tmpdir(), 'weft-tiff-test-'));
  try {
    writeFileSync(join(folder, 'in.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-singlefile', 'in.pdf', 'out'], { cwd: folder });
    const pgm = readFileSync(join(folder, 'out.pgm'));
    // "P5\n<width> <height>\n255\n" then one byte per pixel.
    const [, width, height] = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(pgm.toString('latin1', 0, 40))!;
    const headerLength = pgm.toString('latin1', 0, 40).match(/^P5\s+\d+\s+\d+\s+255\s/)![0].length;
    return { width: Number(width), height: Number(height), pixels: pgm.subarray(headerLength) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * A baseline little-endian TIFF, written by hand so the test needs no image library: one page per
 * image, 8-bit grayscale, uncompressed, one strip per page.
 */
export function grayTiff(pages: { width: number; height: number; pixels: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  let offset = 8;
  const header = Buffer.from([0x49, 0x49, 42, 0, 0, 0, 0, 0]);
  parts.push(header);
  let previousNext = 4; // where the previous "next directory" offset is written
  const patches: { at: number; value: number }[] = [];
  for (const page of pages) {
    const dataOffset = offset;
    parts.push(page.pixels);
    offset += page.pixels.length;
    if (offset % 2 === 1) {
      parts.push(Buffer.alloc(1));
      offset += 1;
    }
    const entries: [number, number, number][] = [
      [256, 4, page.width],
      [257, 4, page.height],
      [258, 3, 8],
      [259, 3, 1],
      [262, 3, 1],
      [273, 4, dataOffset],
      [277, 3, 1],
      [278, 4, page.height],
      [279, 4, page.pixels.length],
    ];
    const directory = Buffer.alloc(2 + entries.length * 12 + 4);
    directory.writeUInt16LE(entries.length, 0);
    entries.forEach(([tag, type, value], index) => {
      const at = 2 + index * 12;
      directory.writeUInt16LE(tag, at);
      directory.writeUInt16LE(type, at + 2);
      directory.writeUInt32LE(1, at + 4);
      if (type === 3) directory.writeUInt16LE(value, at + 8);
      else directory.writeUInt32LE(value, at + 8);
    });
    patches.push({ at: previousNext, value: offset });
    previousNext = offset + 2 + entries.length * 12;
    parts.push(directory);
    offset += directory.length;
  }
  const tiff = Buffer.concat(parts);
  for (const { at, value } of patches) tiff.writeUInt32LE(value, at);
  return tiff;
}

/**
 * A small file that decodes to many large pages: `pages` directories of `width`x`height` white
 * pixels, all pointing at one Deflate strip (a few KB). Each page passes the pixel budget; decoding
 * them all takes seconds of CPU per page.
 */
export function sharedStripTiff(pages: number, width: number, height: number): Buffer {
  const strip = deflateSync(Buffer.alloc(width * height, 0xff), { level: 9 });
  const padded = Buffer.concat([strip, Buffer.alloc(strip.length % 2)]);
  const entries = 9;
  const directorySize = 2 + entries * 12 + 4;
  const firstDirectory = 8 + padded.length;
  const header = Buffer.from([0x49, 0x49, 42, 0, 0, 0, 0, 0]);
  header.writeUInt32LE(firstDirectory, 4);
  const directories = Buffer.alloc(directorySize * pages);
  for (let page = 0; page < pages; page++) {
    let at = page * directorySize;
    directories.writeUInt16LE(entries, at);
    at += 2;
    const tags: [number, number, number][] = [
      [256, 4, width],
      [257, 4, height],
      [258, 3, 8],
      [259, 3, 8], // Deflate
      [262, 3, 1],
      [273, 4, 8], // every page's strip is the same one
      [277, 3, 1],
      [278, 4, height],
      [279, 4, strip.length],
    ];
    for (const [tag, type, value] of tags) {
      directories.writeUInt16LE(tag, at);
      directories.writeUInt16LE(type, at + 2);
      directories.writeUInt32LE(1, at + 4);
      if (type === 3) directories.writeUInt16LE(value, at + 8);
      else directories.writeUInt32LE(value, at + 8);
      at += 12;
    }
    directories.writeUInt32LE(page + 1 < pages ? firstDirectory + (page + 1) * directorySize : 0, at);
  }
  return Buffer.concat([header, padded, directories]);
}
