import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
