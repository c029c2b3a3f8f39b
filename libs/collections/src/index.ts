export * from './map-letting-go.js';
export * from './bag-letting-go.js';
