export { TriggerModule } from './trigger.module.js';
export { TriggerRuntime, type TriggerDeps, type TriggerOptions } from './trigger-runtime.js';
export { startTriggerService, type RunningTrigger } from './start-trigger-service.js';
export type { Clock } from './application/clock.js';
export type * from './application/listener-port.js';
