import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * A node runtime (onnxruntime-node, jsonata) loaded on first use and kept for the engine's life.
 * When it is not installed, every node needing it fails with what to install; the rest of the
 * engine never loads it.
 */
export class OptionalModule<T> {
  private loading: Promise<T> | undefined;

  constructor(
    private readonly what: string,
    private readonly installHint: string,
    private readonly load: () => Promise<T>,
  ) {}

  get(): Promise<T> {
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = undefined;
      const code = (error as { code?: string }).code;
      if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || code === 'ERR_DLOPEN_FAILED') {
        throw new NodeFailure(`${this.what} is not available on this engine: ${this.installHint}`);
      }
      throw error;
    });
    return this.loading;
  }
}
