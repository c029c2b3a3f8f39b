/** Harnesses (and engine children) that share a work queue share this bus prefix (namespacedBus), so they answer each other. */
export const namespaceOfQueue = (durable: string): string => `t_${durable}`;
