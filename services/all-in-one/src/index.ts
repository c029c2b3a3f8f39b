export * from './weft-runtime.js';
