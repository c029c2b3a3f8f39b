/**
 * Pixel sizes read from image headers, so that a small file declaring a huge image (a
 * decompression bomb) is refused before an OCR worker allocates it. PNG and JPEG; other formats
 * answer undefined and are left to the worker.
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
