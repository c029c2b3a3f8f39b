import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AbortableSemaphore } from '../src/adapters/nodes/abortable-semaphore.js';
import { nodeFileSource } from '../src/adapters/nodes/node-files.js';
import { ocrNodeExecutor } from '../src/adapters/nodes/ocr-node.js';
import { OcrWorkers } from '../src/adapters/nodes/ocr-workers.js';
import { tiffPageSizes } from '../src/adapters/nodes/ocr-image-size.js';
import { tiffPagesAsPng } from '../src/adapters/nodes/ocr-tiff.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';
import { grayPixelsOf, grayTiff, sharedStripTiff } from './support/gray-tiff.js';
import { textPdf } from './support/text-pdf.js';
import { waitUntil } from './support/wait-until.js';

const dataUrl = (name: string, type: string, bytes: Buffer) => ({
  name,
  size: bytes.byteLength,
  contentType: type,
  url: `data:${type};base64,${bytes.toString('base64')}`,
});

/** The PNG pdftoppm renders of a PDF page: an image with known text, made at test time. */
function pngOf(pdf: Buffer, dpi = 150): Buffer {
  const folder = mkdtempSync(join(tmpdir(), 'weft-ocr-test-'));
  try {
    writeFileSync(join(folder, 'in.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', String(dpi), '-png', '-singlefile', 'in.pdf', 'out'], { cwd: folder });
    return readFileSync(join(folder, 'out.png'));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const jobOf = (owner: string) => ({ signal: new AbortController().signal, owner });

describe('OCR node (tesseract.js with registry language data, pdftoppm for PDFs)', () => {
  // One worker for the whole file: starting Tesseract is the expensive part.
  const workers = new OcrWorkers(1);
  const decoders = new AbortableSemaphore(1);
  afterAll(() => workers.close());

  const run = async (
    config: Record<string, unknown>,
    options: { pdftoppm?: string; signal?: AbortSignal; maxPixels?: number; maxPages?: number } = {},
  ) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Scan', 'ocrNode', config)
      .edge('In', 'Scan');
    const executor = ocrNodeExecutor({
      workers,
      decoders,
      files: nodeFileSource(undefined),
      maxPages: options.maxPages ?? 5,
      timeoutMs: 60_000,
      maxPixels: options.maxPixels ?? 40_000_000,
      pdftoppm: options.pdftoppm,
    });
    return runInMemory(g.snapshot(), g.id('In'), {}, { executors: pureExecutors(executor), signal: options.signal });
  };

  test('reads the text of a PNG made at test time, with words, confidences and boxes', async () => {
    const png = pngOf(textPdf(['INVOICE 4711 PAID']));
    const { outcome, listener } = await run({ file: dataUrl('scan.png', 'image/png', png) });
    expect(outcome.status).toBe('completed');
    const output = listener.output('Scan') as {
      text: string;
      pages: {
        text: string;
        words: { text: string; confidence: number; bbox: { x0: number; y0: number; x1: number; y1: number } }[];
      }[];
    };
    expect(output.text).toContain('INVOICE 4711 PAID');
    expect(output.pages).toHaveLength(1);
    expect(output.pages[0]!.words.map((word) => word.text)).toEqual(['INVOICE', '4711', 'PAID']);
    for (const word of output.pages[0]!.words) {
      expect(word.confidence).toBeGreaterThan(50);
      expect(word.bbox.x1).toBeGreaterThan(word.bbox.x0);
      expect(word.bbox.y1).toBeGreaterThan(word.bbox.y0);
    }
  });

  test('renders a PDF page by page', async () => {
    const { outcome, listener } = await run({
      file: dataUrl('two.pdf', 'application/pdf', textPdf(['FIRST PAGE 1', 'SECOND PAGE 2'])),
    });
    expect(outcome.status).toBe('completed');
    const output = listener.output('Scan') as { text: string; pages: { text: string }[] };
    expect(output.pages.map((page) => page.text.trim())).toEqual(['FIRST PAGE 1', 'SECOND PAGE 2']);
  });

  test('a missing pdftoppm fails with what to install', async () => {
    const { outcome } = await run(
      { file: dataUrl('one.pdf', 'application/pdf', textPdf(['X'])) },
      { pdftoppm: '/nonexistent/pdftoppm' },
    );
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('install poppler-utils') });
  });

  test('a language whose data package is absent fails with the package to add, and nothing is fetched', async () => {
    const png = pngOf(textPdf(['HELLO']));
    const { outcome } = await run({ file: dataUrl('scan.png', 'image/png', png), languages: ['xyz'] });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'OCR language "xyz" is not installed: add the npm package @tesseract.js-data/xyz',
    });
  });

  /** The start of a PNG: its signature and an IHDR claiming `width` x `height` pixels. */
  const pngHeader = (width: number, height: number, length = 33): Buffer => {
    const header = Buffer.alloc(length, 0x5a);
    Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').copy(header);
    header.writeUInt32BE(width, 16);
    header.writeUInt32BE(height, 20);
    return header;
  };

  test('a missing tesseract.js runtime fails with what to install', async () => {
    const missing = new OcrWorkers(1, () => Promise.reject(new Error("Cannot find module 'tesseract.js'")));
    const executor = ocrNodeExecutor({
      workers: missing,
      decoders: new AbortableSemaphore(1),
      files: nodeFileSource(undefined),
      maxPixels: 1_000_000,
      maxPages: 1,
      timeoutMs: 5000,
    });
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Scan', 'ocrNode', {
        file: dataUrl('a.png', 'image/png', pngHeader(10, 10)),
      })
      .edge('In', 'Scan');
    const { outcome } = await runInMemory(g.snapshot(), g.id('In'), {}, { executors: pureExecutors(executor) });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('install the npm package tesseract.js'),
    });
  });

  test('a worker that cannot start fails every job waiting for it, not only the first', async () => {
    const missing = new OcrWorkers(1, () => Promise.reject(new Error("Cannot find module 'tesseract.js'")));
    const jobs = [1, 2, 3].map(() => missing.recognize(pngHeader(10, 10), ['eng'], jobOf('org')));
    const settled = await Promise.allSettled(jobs);
    expect(settled.map((job) => job.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  test('a timeout fails the node; the pool still works afterwards', async () => {
    const pdf = textPdf(['SLOW ONE', 'SLOW TWO', 'SLOW THREE', 'SLOW FOUR']);
    const { outcome } = await run({ file: dataUrl('slow.pdf', 'application/pdf', pdf), timeoutMs: 1 });
    expect(outcome).toMatchObject({ status: 'failed', error: 'OCR timed out after 1 ms' });
    const again = await run({ file: dataUrl('scan.png', 'image/png', pngOf(textPdf(['AGAIN 7']))) });
    expect((again.listener.output('Scan') as { text: string }).text).toContain('AGAIN 7');
  });

  test('cancelling the execution ends a recognition in progress', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled by test'));
    const { outcome } = await run(
      { file: dataUrl('scan.png', 'image/png', pngOf(textPdf(['CANCEL ME']))) },
      { signal: controller.signal },
    );
    expect(outcome.status).not.toBe('completed');
  });

  test('a timeout that fires before the recognition starts fails only that node; the engine and the pool go on', async () => {
    // Stopped before, during and right after the job reaches a worker: nothing may end the process.
    for (const timeoutMs of [1, 2, 5, 20]) {
      const { outcome } = await run({ file: dataUrl('scan.png', 'image/png', pngOf(textPdf(['EARLY']))), timeoutMs });
      expect(['failed', 'completed']).toContain(outcome.status);
    }
    const again = await run({ file: dataUrl('scan.png', 'image/png', pngOf(textPdf(['STILL HERE 3']))) });
    expect((again.listener.output('Scan') as { text: string }).text).toContain('STILL HERE 3');
  });

  test("a stopped recognition ends only its own worker: another execution's job, running or queued, completes", async () => {
    const pair = new OcrWorkers(2);
    try {
      const image = pngOf(textPdf(['OTHER TENANT 5']));
      // 1200 dpi: a 10200x3333 image, seconds of recognition (2 s on an idle machine), so the
      // cancel lands while it runs; the first run also leaves a started worker idle for it.
      const slow = pngOf(textPdf(['STOPPED 1']), 1200);
      await pair.recognize(slow, ['eng'], jobOf('org-a'));
      const cancel = new AbortController();
      const stopped = pair.recognize(slow, ['eng'], { signal: cancel.signal, owner: 'org-a' });
      const others = [1, 2, 3].map(() => pair.recognize(image, ['eng'], jobOf('org-b')));
      await new Promise((resolve) => setTimeout(resolve, 300));
      cancel.abort(new Error('cancelled'));
      await expect(stopped).rejects.toThrow('cancelled');
      for (const page of await Promise.all(others)) expect(page.text).toContain('OTHER TENANT 5');
      expect(pair.stoppedWorkers).toBe(1);
    } finally {
      await pair.close();
    }
  }, 120_000);

  test("one organization's queued pages do not hold back another's: jobs are taken in turn", async () => {
    const page = pngOf(textPdf(['TURN 4']));
    await workers.recognize(page, ['eng'], jobOf('warm-up'));
    const finished: string[] = [];
    const track = (name: string, owner: string) =>
      workers.recognize(page, ['eng'], jobOf(owner)).then(() => finished.push(name));
    // Org A queues four pages before org B queues one: B's runs second, not fifth.
    const jobs = [track('a1', 'org-a'), track('a2', 'org-a'), track('a3', 'org-a'), track('a4', 'org-a')];
    jobs.push(track('b1', 'org-b'));
    await Promise.all(jobs);
    expect(finished).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  });

  test('TIFF pages are decoded off the event loop, one at a time, and the decoding stops with the node', async () => {
    // 30 pages of 6000x6000 pixels in a few KB: minutes of decoding if it ran to the end.
    const bomb = sharedStripTiff(30, 6000, 6000);
    expect(bomb.length).toBeLessThan(100_000);
    let longestGap = 0;
    let last = Date.now();
    const ticker = setInterval(() => {
      longestGap = Math.max(longestGap, Date.now() - last);
      last = Date.now();
    }, 10);
    const started = Date.now();
    try {
      const { outcome } = await run(
        { file: dataUrl('bomb.tif', 'image/tiff', bomb), timeoutMs: 1500 },
        { maxPages: 50 },
      );
      expect(outcome).toMatchObject({ status: 'failed', error: 'OCR timed out after 1500 ms' });
    } finally {
      clearInterval(ticker);
    }
    // Bounds far above the expected values (a decode in the event loop took 2.7 s per page here).
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(longestGap).toBeLessThan(2_000);
  }, 120_000);

  test('an image declaring more pixels than WEFT_OCR_MAX_PIXELS is refused before a worker decodes it', async () => {
    // A valid PNG header claiming 100000 x 100000 pixels: a few bytes that would decode to 10 GB.
    const header = Buffer.alloc(33);
    Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').copy(header);
    header.writeUInt32BE(100_000, 16);
    header.writeUInt32BE(100_000, 20);
    const { outcome } = await run({ file: dataUrl('bomb.png', 'image/png', header) });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'the image is 100000x100000 pixels, more than WEFT_OCR_MAX_PIXELS (40000000)',
    });
  });

  test.each([
    ['GIF', '474946383961a086a086'],
    ['BMP', '424d000000000000000000000000280000000000a0860100a0860100'],
    ['something else', '00010203'],
  ])('a %s file is refused before a worker decodes it, saying what OCR reads', async (_format, hex) => {
    const { outcome } = await run({ file: dataUrl('scan.bin', 'application/octet-stream', Buffer.from(hex, 'hex')) });
    expect(outcome).toMatchObject({
      status: 'failed',
      error:
        'the file is not a PNG, JPEG, TIFF or PDF whose size can be read: OCR reads only these (convert GIF, BMP or WebP first)',
    });
  });

  test('reads every page of a TIFF made at test time, as pages', async () => {
    const tiff = grayTiff([grayPixelsOf(textPdf(['TIFF PAGE 1'])), grayPixelsOf(textPdf(['SECOND SHEET 2']))]);
    const { outcome, listener } = await run({ file: dataUrl('scan.tif', 'image/tiff', tiff) });
    expect(outcome.status).toBe('completed');
    const output = listener.output('Scan') as { text: string; pages: { text: string; words: { text: string }[] }[] };
    expect(output.pages.map((page) => page.text.trim())).toEqual(['TIFF PAGE 1', 'SECOND SHEET 2']);
    expect(output.pages[1]!.words.map((word) => word.text)).toEqual(['SECOND', 'SHEET', '2']);
    expect(output.text).toContain('TIFF PAGE 1');
  });

  test('a TIFF waits for a free decoder slot before a thread decodes it', async () => {
    const tiff = grayTiff([grayPixelsOf(textPdf(['WAITED TURN']))]);
    await decoders.acquire(new AbortController().signal, 'another-org');
    const running = run({ file: dataUrl('scan.tif', 'image/tiff', tiff) });
    try {
      await waitUntil(() => decoders.queued === 1);
    } finally {
      decoders.release();
    }
    const { outcome, listener } = await running;
    expect(outcome.status).toBe('completed');
    expect((listener.output('Scan') as { text: string }).text.trim()).toBe('WAITED TURN');
  });

  test('a TIFF holds its decoder slot only while a page decodes, not while the page waits for OCR', async () => {
    const tiff = grayTiff([grayPixelsOf(textPdf(['ONE'])), grayPixelsOf(textPdf(['TWO']))]);
    const slots = new AbortableSemaphore(1);
    const pages = tiffPagesAsPng(tiff, tiffPageSizes(tiff, 5)!, slots, jobOf('org-a'));
    const first = await pages.next();
    expect(first.done).toBe(false);
    // Page one is out (on its way to OCR): another organization's page can decode now.
    const other = slots.acquire(new AbortController().signal, 'org-b').then(() => 'free');
    const held = new Promise((resolve) => setTimeout(() => resolve('held'), 500));
    expect(await Promise.race([other, held])).toBe('free');
    slots.release();
    expect((await pages.next()).done).toBe(false);
    expect((await pages.next()).done).toBe(true);
  });

  test('a TIFF page declaring more pixels than WEFT_OCR_MAX_PIXELS is refused before anything decodes it', async () => {
    const page = grayPixelsOf(textPdf(['SMALL']), 30);
    const bomb = grayTiff([page, { width: 100_000, height: 100_000, pixels: Buffer.alloc(16) }]);
    const { outcome } = await run({ file: dataUrl('bomb.tif', 'image/tiff', bomb) });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'page 2 of the TIFF is 100000x100000 pixels, more than WEFT_OCR_MAX_PIXELS (40000000)',
    });
  });

  test('a damaged TIFF (cut short) fails its node saying so', async () => {
    const tiff = grayTiff([grayPixelsOf(textPdf(['CUT SHORT']), 30)]);
    const cut = tiff.subarray(0, tiff.length - 10);
    const { outcome } = await run({ file: dataUrl('cut.tif', 'image/tiff', cut) });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'the TIFF is damaged: a page directory is cut short',
    });
  });

  test('an image the OCR runtime cannot decode fails its node; the engine and the workers go on', async () => {
    // A PNG header with a sane size and garbage after it: it passes the size check, not the decoder.
    const broken = await run({ file: dataUrl('broken.png', 'image/png', pngHeader(10, 10, 64)) });
    expect(broken.outcome).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^the image could not be read: .*Error attempting to read image/),
    });
    const good = await run({ file: dataUrl('scan.png', 'image/png', pngOf(textPdf(['STILL READING 42']))) });
    expect(good.outcome.status).toBe('completed');
    expect((good.listener.output('Scan') as { text: string }).text).toContain('STILL READING 42');
  });

  test('a PDF page too large for the pixel budget is rendered at a lower resolution', async () => {
    const pdf = textPdf(['FIRST PAGE 1']);
    const { outcome, listener } = await run(
      { file: dataUrl('one.pdf', 'application/pdf', pdf) },
      { maxPixels: 200_000 },
    );
    expect(outcome.status).toBe('completed');
    const page = (listener.output('Scan') as { pages: { text: string; words: { bbox: { x1: number } }[] }[] })
      .pages[0]!;
    expect(page.text.trim()).toBe('FIRST PAGE 1');
    // 612 x 200 pt within 200,000 pixels is 92 dpi (782 px wide); at 200 dpi the text would end near 750 px.
    expect(Math.max(...page.words.map((word) => word.bbox.x1))).toBeLessThan(500);
  });
});
