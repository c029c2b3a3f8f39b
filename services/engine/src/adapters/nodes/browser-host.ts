import { access, constants } from 'node:fs/promises';
import type { Browser, BrowserContext } from 'playwright-core';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import { AbortableSemaphore } from './abortable-semaphore.js';

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
  // Every connection goes through the run's guarded proxy; WebRTC must not send UDP around it.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export interface BrowserHostOptions {
  /** WEFT_CHROMIUM_PATH. */
  executablePath: string;
  /** WEFT_BROWSER_MAX_CONTEXTS. */
  maxContexts: number;
}

export class BrowserHost {
  private browser: Promise<Browser> | undefined;
  private readonly contexts: AbortableSemaphore;

  constructor(private readonly options: BrowserHostOptions) {
    this.contexts = new AbortableSemaphore(options.maxContexts);
  }

  /**
   * Runs `work` in a fresh context, closed afterwards whatever happens. `proxyUrl`: the proxy every
   * connection of the context goes through, loopback included (Chromium skips proxies for loopback
   * unless told `<-loopback>`).
   */
  async withContext<T>(
    signal: AbortSignal,
    owner: string,
    proxyUrl: string,
    work: (context: BrowserContext) => Promise<T>,
  ): Promise<T> {
    await this.contexts.acquire(signal, owner);
    try {
      const browser = await this.launched();
      const context = await browser.newContext({
        acceptDownloads: false,
        serviceWorkers: 'block',
        proxy: { server: proxyUrl, bypass: '<-loopback>' },
      });
      try {
        return await work(context);
      } finally {
        await context.close().catch(() => undefined);
      }
    } finally {
      this.contexts.release();
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
}
