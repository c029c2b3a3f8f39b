import type { Bus } from '@weft/bus';

/**
 * A real bus whose request/reply subjects carry a per-harness prefix, so the catalog (and engine)
 * a test starts on the shared NATS server never answers another test file's requests (jest runs
 * files in parallel workers). Not a stub: every message still travels through NATS. Same idea as
 * the catalog's own tests (services/process-catalog/test/fixtures/namespaced-bus.ts).
 */
export function namespacedBus(inner: Bus, prefix: string): Bus {
  const renamed = <S extends { subject: string }>(spec: S): S => ({ ...spec, subject: `${prefix}.${spec.subject}` });
  const overrides: Partial<Bus> = {
    request: (spec, payload, options) => inner.request(renamed(spec), payload, options),
    serve: (spec, handler) => inner.serve(renamed(spec), handler),
  };
  return new Proxy(inner, {
    get(target, key) {
      const override = overrides[key as keyof Bus];
      if (override) return override;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Harnesses (and engine children) that share a work queue share this prefix, so they answer each other. */
export const namespaceOfQueue = (durable: string): string => `t_${durable}`;
