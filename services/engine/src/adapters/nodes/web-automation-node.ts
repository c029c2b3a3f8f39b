import type { FileReference, WebAutomationNodeConfig, WebAutomationStep } from '@weft/contracts';
import type { BrowserContext, Page } from 'playwright-core';
import { NodeFailure, type NodeExecutor, type NodeRunContext } from '../../domain/nodes/node-executor.js';
import type { OutboundGuard } from '../http/outbound-guard.js';
import type { BrowserHost } from './browser-host.js';
import { BrowserProxy } from './browser-proxy.js';
import { nodeFileOwner, type BlobSink, type NodeFileOwner } from './integration-node.js';

/**
 * `webAutomationNode`: runs its steps in a fresh browser context whose every connection (documents,
 * redirects, frames, scripts, images, fetches, websockets) goes through a proxy of this run
 * (BrowserProxy): it must name an allowed host and pass the outbound guard, and it reaches the
 * address the guard checked, or it fails. Output `{extracted, files}`.
 */
export interface WebAutomationOptions {
  browsers: BrowserHost;
  guard: OutboundGuard;
  blobs?: BlobSink;
  /** WEFT_BROWSER_STEP_TIMEOUT_MS: a step's limit when it sets no timeoutMs. */
  stepTimeoutMs: number;
}

/** `goto` opens http(s) pages only: a file: or chrome: url never reaches the proxy. */
function checkedGotoUrl(url: string | undefined): string {
  let parsed: URL;
  try {
    parsed = new URL(url ?? '');
  } catch {
    throw new NodeFailure(`malformed url "${String(url).slice(0, 200)}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new NodeFailure(`scheme ${parsed.protocol} is not allowed (http and https only)`);
  }
  return parsed.href;
}

const stepName = (step: WebAutomationStep, index: number): string =>
  `step ${index + 1} (${step.action}${step.selector ? ` ${step.selector}` : step.url ? ` ${step.url}` : ''})`;

async function store(
  blobs: BlobSink | undefined,
  owner: NodeFileOwner,
  name: string,
  bytes: Buffer,
  contentType: string,
): Promise<FileReference> {
  if (blobs) return blobs.put(owner, name, bytes, contentType);
  return { name, size: bytes.byteLength, contentType, url: `data:${contentType};base64,${bytes.toString('base64')}` };
}

async function runStep(
  page: Page,
  step: WebAutomationStep,
  timeout: number,
  result: { extracted: Record<string, unknown>; files: FileReference[] },
  blobs: BlobSink | undefined,
  owner: NodeFileOwner,
): Promise<void> {
  const selector = step.selector ?? '';
  switch (step.action) {
    case 'goto':
      await page.goto(checkedGotoUrl(step.url), { timeout, waitUntil: 'load' });
      return;
    case 'click':
      await page.click(selector, { timeout });
      return;
    case 'fill':
      await page.fill(selector, step.value ?? '', { timeout });
      return;
    case 'select':
      await page.selectOption(selector, step.value ?? '', { timeout });
      return;
    case 'waitFor':
      await page.waitForSelector(selector, { timeout });
      return;
    case 'extractText':
      result.extracted[step.name ?? selector] = await page.textContent(selector, { timeout });
      return;
    case 'extractAttribute':
      result.extracted[step.name ?? selector] = await page.getAttribute(selector, step.attribute ?? '', { timeout });
      return;
    case 'screenshot':
      result.files.push(
        await store(
          blobs,
          owner,
          step.name ?? 'screenshot.png',
          await page.screenshot({ fullPage: true, timeout }),
          'image/png',
        ),
      );
      return;
    case 'pdf': {
      // page.pdf() takes no timeout: a page that never finishes printing would hold a browser slot.
      const pdf = await withinTimeout(page.pdf(), timeout, () => page.context().close());
      result.files.push(await store(blobs, owner, step.name ?? 'page.pdf', pdf, 'application/pdf'));
      return;
    }
  }
}

/** `work`, or a TimeoutError after `ms` (then `onTimeout` runs, to stop what `work` waits on). */
async function withinTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Promise<void>): Promise<T> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      void onTimeout().catch(() => undefined);
      reject(Object.assign(new Error(`timed out after ${ms} ms`), { name: 'TimeoutError' }));
    }, ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

export const webAutomationNodeExecutor = (options: WebAutomationOptions): NodeExecutor<WebAutomationNodeConfig> => ({
  type: 'webAutomationNode',
  async execute(config, _input, run) {
    const proxy = await BrowserProxy.start({ allowedHosts: config.allowedHosts ?? [], guard: options.guard });
    try {
      return await options.browsers.withContext(run.signal, run.organizationId, proxy.url, (context) =>
        runSteps(context, config, run, options, proxy),
      );
    } finally {
      await proxy.close();
    }
  },
});

async function runSteps(
  context: BrowserContext,
  config: WebAutomationNodeConfig,
  run: NodeRunContext,
  options: WebAutomationOptions,
  proxy: BrowserProxy,
) {
  // Cancelling closes the context: whatever step is waiting fails at once.
  const cancel = (): void => void context.close().catch(() => undefined);
  run.signal.addEventListener('abort', cancel, { once: true });
  const result = { extracted: {} as Record<string, unknown>, files: [] as FileReference[] };
  try {
    const page = await context.newPage();
    for (const [index, step] of config.steps.entries()) {
      const timeout = step.timeoutMs ?? options.stepTimeoutMs;
      try {
        await runStep(page, step, timeout, result, options.blobs, nodeFileOwner(run));
      } catch (error) {
        run.signal.throwIfAborted();
        const message = (error as Error).message.split('\n')[0] ?? '';
        if ((error as Error).name === 'TimeoutError') {
          throw new NodeFailure(`${stepName(step, index)} timed out after ${timeout} ms`);
        }
        const blocked = proxy.lastRefusal === undefined ? '' : ` (blocked: ${proxy.lastRefusal})`;
        throw new NodeFailure(`${stepName(step, index)} failed: ${message}${blocked}`);
      }
    }
    return { output: result };
  } finally {
    run.signal.removeEventListener('abort', cancel);
  }
}
