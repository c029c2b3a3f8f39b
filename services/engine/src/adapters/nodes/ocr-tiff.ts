import { crc32, deflateSync } from 'node:zlib';
import UTIF from 'utif2';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import type { PixelSize } from './ocr-image-size.js';

/**
 * TIFF pages as PNG images for the OCR workers (tesseract.js reads PNG and JPEG, not TIFF): each
 * page decoded with utif2 (pure JS: LZW, Deflate, PackBits, CCITT, JPEG-in-TIFF) after its size
 * passed the pixel budget, flattened onto white, and written as an 8-bit grayscale PNG. Pages are
 * decoded one at a time, so at most one page's pixels are held at once. Decoding runs on the
 * engine's thread; the pixel budget bounds how long it takes.
 */
export function tiffPagesAsPng(bytes: Buffer, pages: readonly PixelSize[]): Buffer[] {
  let directories: ReturnType<typeof UTIF.decode>;
  try {
    directories = UTIF.decode(bytes);
  } catch (error) {
    throw new NodeFailure(`the TIFF could not be read: ${(error as Error).message}`);
  }
  return pages.map((page, index) => {
    const directory = directories[index];
    if (!directory) throw new NodeFailure(`the TIFF could not be read: page ${index + 1} is missing`);
    let rgba: Uint8Array;
    try {
      UTIF.decodeImage(bytes, directory);
      rgba = UTIF.toRGBA8(directory);
    } catch (error) {
      throw new NodeFailure(`the TIFF could not be read: page ${index + 1}: ${(error as Error).message}`);
    }
    if (
      directory.width !== page.width ||
      directory.height !== page.height ||
      rgba.length < page.width * page.height * 4
    ) {
      throw new NodeFailure(`the TIFF could not be read: page ${index + 1} does not decode to its declared size`);
    }
    return grayPng(rgba, page.width, page.height);
  });
}

/** An 8-bit grayscale PNG of RGBA pixels composited onto white. */
function grayPng(rgba: Uint8Array, width: number, height: number): Buffer {
  const rows = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width + 1);
    for (let x = 0; x < width; x++) {
      const pixel = (y * width + x) * 4;
      const gray = (rgba[pixel]! * 299 + rgba[pixel + 1]! * 587 + rgba[pixel + 2]! * 114) / 1000;
      const alpha = rgba[pixel + 3]!;
      rows[row + 1 + x] = Math.round((gray * alpha + 255 * (255 - alpha)) / 255);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample; colour type 0 (grayscale), compression, filter and interlace 0
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}
