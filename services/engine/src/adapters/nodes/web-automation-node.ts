import type { FileReference, WebAutomationNodeConfig, WebAutomationStep } from '@weft/contracts';
import type { BrowserContext, Page } from 'playwright-core';
import { NodeFailure, type NodeExecutor } from '../../domain/nodes/node-executor.js';
import { OutboundBlockedError, type OutboundGuard } from '../http/outbound-guard.js';
import type { BrowserHost } from './browser-host.js';
import type { BlobSink } from './integration-node.js';

/**
 * `webAutomationNode`: runs its steps in a fresh browser context. Every request the page makes
 * (documents, scripts, images, fetches, websockets) must name an allowed host and pass the
 * outbound guard's address check, or it is aborted. Output `{extracted, files}`.
 */
export interface WebAutomationOptions {
  browsers: BrowserHost;
  guard: OutboundGuard;
  blobs?: BlobSink;
  /** WEFT_BROWSER_STEP_TIMEOUT_MS: a step's limit when it sets no timeoutMs. */
  stepTimeoutMs: number;
}

const hostAllowed = (host: string, allowed: readonly string[]): boolean =>
  allowed.length === 0 ||
  allowed.some((entry) => {
    const name = entry.toLowerCase();
    return name.startsWith('*.') ? host.endsWith(name.slice(1)) : host === name;
  });

/** Why a URL may not be fetched by the page, or undefined when it may. */
async function refusal(url: string, allowed: readonly string[], guard: OutboundGuard): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `malformed url`;
  }
  if (parsed.protocol === 'data:' || parsed.protocol === 'blob:' || parsed.href === 'about:blank') return undefined;
  const secure = parsed.protocol === 'https:' || parsed.protocol === 'wss:';
  if (!secure && parsed.protocol !== 'http:' && parsed.protocol !== 'ws:')
    return `scheme ${parsed.protocol} is not allowed`;
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!hostAllowed(host, allowed)) return `host ${host} is not in allowedHosts`;
  try {
    await guard.resolveTarget(host, Number(parsed.port) || (secure ? 443 : 80));
    return undefined;
  } catch (error) {
    return error instanceof OutboundBlockedError ? error.message : `${host} cannot be resolved`;
  }
}

const stepName = (step: WebAutomationStep, index: number): string =>
  `step ${index + 1} (${step.action}${step.selector ? ` ${step.selector}` : step.url ? ` ${step.url}` : ''})`;

async function store(
  blobs: BlobSink | undefined,
  name: string,
  bytes: Buffer,
  contentType: string,
): Promise<FileReference> {
  if (blobs) return blobs.put(name, bytes, contentType);
  return { name, size: bytes.byteLength, contentType, url: `data:${contentType};base64,${bytes.toString('base64')}` };
}

async function runStep(
  page: Page,
  step: WebAutomationStep,
  timeout: number,
  result: { extracted: Record<string, unknown>; files: FileReference[] },
  blobs: BlobSink | undefined,
): Promise<void> {
  const selector = step.selector ?? '';
  switch (step.action) {
    case 'goto':
      await page.goto(step.url ?? '', { timeout, waitUntil: 'load' });
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
          step.name ?? 'screenshot.png',
          await page.screenshot({ fullPage: true, timeout }),
          'image/png',
        ),
      );
      return;
    case 'pdf':
      result.files.push(await store(blobs, step.name ?? 'page.pdf', await page.pdf(), 'application/pdf'));
      return;
  }
}

async function guardContext(
  context: BrowserContext,
  config: WebAutomationNodeConfig,
  guard: OutboundGuard,
  refused: string[],
) {
  const allowed = config.allowedHosts ?? [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    const reason = await refusal(url, allowed, guard);
    if (reason === undefined) return route.continue();
    refused.push(`${url.slice(0, 200)}: ${reason}`);
    return route.abort('blockedbyclient');
  });
  await context.routeWebSocket(/.*/, async (socket) => {
    const reason = await refusal(socket.url(), allowed, guard);
    if (reason === undefined) return void socket.connectToServer();
    refused.push(`${socket.url().slice(0, 200)}: ${reason}`);
    await socket.close({ code: 1008, reason: 'blocked' });
  });
}

export const webAutomationNodeExecutor = (options: WebAutomationOptions): NodeExecutor<WebAutomationNodeConfig> => ({
  type: 'webAutomationNode',
  async execute(config, _input, run) {
    return options.browsers.withContext(run.signal, async (context) => {
      const refused: string[] = [];
      await guardContext(context, config, options.guard, refused);
      // Cancelling closes the context: whatever step is waiting fails at once.
      const cancel = (): void => void context.close().catch(() => undefined);
      run.signal.addEventListener('abort', cancel, { once: true });
      const result = { extracted: {} as Record<string, unknown>, files: [] as FileReference[] };
      try {
        const page = await context.newPage();
        for (const [index, step] of config.steps.entries()) {
          const timeout = step.timeoutMs ?? options.stepTimeoutMs;
          try {
            await runStep(page, step, timeout, result, options.blobs);
          } catch (error) {
            run.signal.throwIfAborted();
            if (error instanceof NodeFailure) throw error;
            const message = (error as Error).message.split('\n')[0] ?? '';
            if ((error as Error).name === 'TimeoutError') {
              throw new NodeFailure(`${stepName(step, index)} timed out after ${timeout} ms`);
            }
            const blocked = refused.length > 0 ? ` (blocked: ${refused.at(-1)})` : '';
            throw new NodeFailure(`${stepName(step, index)} failed: ${message}${blocked}`);
          }
        }
        return { output: result };
      } finally {
        run.signal.removeEventListener('abort', cancel);
      }
    });
  },
});
