/** Nest injection token of the TriggerRuntime. */
export const TRIGGER_RUNTIME = Symbol('TRIGGER_RUNTIME');
