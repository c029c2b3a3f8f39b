/** The bus methods that address a subject; the rest of a bus passes through unchanged. */
interface SubjectMethods {
  request(spec: { subject: string }, ...rest: never[]): unknown;
  serve(spec: { subject: string }, ...rest: never[]): unknown;
}

/**
 * A real bus whose request/reply subjects carry a per-test prefix, so the catalog (or engine) a
 * test starts on the shared NATS server never answers another test file's requests (jest runs
 * files in parallel workers). Not a stub: every message still travels through NATS.
 */
export function namespacedBus<B extends SubjectMethods>(inner: B, prefix: string): B {
  const renamed = <S extends { subject: string }>(spec: S): S => ({ ...spec, subject: `${prefix}.${spec.subject}` });
  const overrides: Record<string | symbol, unknown> = {
    request: (spec: { subject: string }, ...rest: never[]) => inner.request(renamed(spec), ...rest),
    serve: (spec: { subject: string }, ...rest: never[]) => inner.serve(renamed(spec), ...rest),
  };
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
