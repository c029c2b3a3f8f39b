/** Nest injection token of the TestingRuntime. */
export const TESTING_RUNTIME = Symbol('TESTING_RUNTIME');
