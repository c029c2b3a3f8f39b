import { access, constants } from 'node:fs/promises';
import type { Browser, BrowserContext } from 'playwright-core';
import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * The engine's one Chromium (Debian's package, never a downloaded browser), launched on first use
 * and reused by every web automation run, each in a fresh context; at most `maxContexts` at once.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface BrowserHostOptions {
  /** WEFT_CHROMIUM_PATH. */
  executablePath: string;
  /** WEFT_BROWSER_MAX_CONTEXTS. */
  maxContexts: number;
}

export class BrowserHost {
  private browser: Promise<Browser> | undefined;
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly options: BrowserHostOptions) {}

  /** Runs `work` in a fresh context, closed afterwards whatever happens. */
  async withContext<T>(signal: AbortSignal, work: (context: BrowserContext) => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      const browser = await this.launched();
      const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
      try {
        return await work(context);
      } finally {
        await context.close().catch(() => undefined);
      }
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    const browser = this.browser;
    this.browser = undefined;
    await (await browser?.catch(() => undefined))?.close();
  }

  private launched(): Promise<Browser> {
    if (!this.browser) {
      const pending = this.launch();
      this.browser = pending;
      // A browser that failed to start or crashed is launched again by the next run.
      const forget = (): void => {
        if (this.browser === pending) this.browser = undefined;
      };
      pending.then((browser) => browser.on('disconnected', forget), forget);
    }
    return this.browser;
  }

  private async launch(): Promise<Browser> {
    const path = this.options.executablePath;
    try {
      await access(path, constants.X_OK);
    } catch {
      throw new NodeFailure(
        `web automation needs Chromium at ${path}: install it (apt-get install chromium) or set WEFT_CHROMIUM_PATH`,
      );
    }
    let playwright: typeof import('playwright-core');
    try {
      playwright = await import('playwright-core');
    } catch {
      throw new NodeFailure('web automation needs the npm package playwright-core');
    }
    try {
      return await playwright.chromium.launch({ executablePath: path, args: CHROMIUM_ARGS, headless: true });
    } catch (error) {
      throw new NodeFailure(`Chromium at ${path} did not start: ${(error as Error).message.split('\n')[0]}`);
    }
  }

  private async acquire(signal: AbortSignal): Promise<void> {
    if (this.active < this.options.maxContexts) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.active++;
        resolve();
      };
      const onAbort = (): void => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(signal.reason as Error);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(): void {
    this.active--;
    this.waiting.shift()?.();
  }
}
