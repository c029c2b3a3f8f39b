export * from './weft-config.js';
