import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * Pixel sizes read from image headers, so that a small file declaring a huge image (a
 * decompression bomb) is refused before an OCR worker or a decoder allocates it. PNG, JPEG and
 * TIFF; any other format, or a header too short to say, answers undefined (and the OCR node
 * refuses the file).
 */
export interface PixelSize {
  width: number;
  height: number;
}

const PNG_SIGNATURE = '89504e470d0a1a0a';

function jpegSize(bytes: Buffer): PixelSize | undefined {
  let offset = 2;
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1]!;
    // SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    }
    offset += 2 + bytes.readUInt16BE(offset + 2);
  }
  return undefined;
}

export function imagePixelSize(bytes: Buffer): PixelSize | undefined {
  if (bytes.length >= 24 && bytes.subarray(0, 8).toString('hex') === PNG_SIGNATURE) {
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegSize(bytes);
  return undefined;
}

/** The largest page of a PDF in points (from `pdfinfo -l`), to render within a pixel budget. */
export function largestPageArea(pdfinfoOutput: string): number {
  let largest = 0;
  for (const match of pdfinfoOutput.matchAll(/^Page\s+\d+\s+size:\s+([\d.]+) x ([\d.]+) pts/gm)) {
    largest = Math.max(largest, Number(match[1]) * Number(match[2]));
  }
  return largest;
}

/**
 * The pages of a baseline TIFF (`II*\0` or `MM\0*`), read from its image file directories without
 * decoding anything: each page's pixel size, and a check that its strips lie inside the file (a
 * page pointing past the end is damaged). At most `maxPages` pages are read; undefined when the
 * bytes are not a TIFF, a NodeFailure naming the damage when they are a damaged one.
 */
export function tiffPageSizes(bytes: Buffer, maxPages: number): PixelSize[] | undefined {
  if (bytes.length < 8) return undefined;
  const order = bytes.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const little = order === 'II';
  const u16 = (at: number): number => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number): number => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  if (u16(2) !== 42) return undefined;
  const pages: PixelSize[] = [];
  const seen = new Set<number>();
  for (let offset = u32(4); offset !== 0 && pages.length < maxPages;) {
    // A directory must lie inside the file, and a loop of directories would never end.
    if (seen.has(offset) || offset + 2 > bytes.length) throw damaged('a page directory lies outside the file');
    seen.add(offset);
    const count = u16(offset);
    const end = offset + 2 + count * 12;
    if (end + 4 > bytes.length) throw damaged('a page directory is cut short');
    const tags = new Map<number, number[]>();
    for (let entry = offset + 2; entry < end; entry += 12) {
      const type = u16(entry + 2);
      const values = u32(entry + 4);
      const size = type === 3 ? 2 : type === 4 ? 4 : 0;
      if (size === 0 || values === 0 || values > 1_000_000) continue;
      const at = values * size <= 4 ? entry + 8 : u32(entry + 8);
      if (at + values * size > bytes.length) throw damaged('a tag points past the end of the file');
      tags.set(
        u16(entry),
        Array.from({ length: values }, (_, index) => (size === 2 ? u16(at + index * 2) : u32(at + index * 4))),
      );
    }
    const width = tags.get(256)?.[0];
    const height = tags.get(257)?.[0];
    const stripOffsets = tags.get(273) ?? tags.get(324) ?? [];
    const stripBytes = tags.get(279) ?? tags.get(325) ?? [];
    if (!width || !height || stripOffsets.length === 0 || stripOffsets.length !== stripBytes.length)
      throw damaged(`page ${pages.length + 1} has no size or no image data`);
    if (stripOffsets.some((start, index) => start + (stripBytes[index] ?? 0) > bytes.length))
      throw damaged(`the image data of page ${pages.length + 1} runs past the end of the file`);
    pages.push({ width, height });
    offset = u32(end);
  }
  return pages.length > 0 ? pages : undefined;
}

const damaged = (what: string): NodeFailure => new NodeFailure(`the TIFF is damaged: ${what}`);
