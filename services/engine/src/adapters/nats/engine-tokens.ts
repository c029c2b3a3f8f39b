/** Injection token of the engine runtime (engine, API handlers, queue consumer). */
export const ENGINE_RUNTIME = Symbol.for('weft.engine.runtime');
