export * from './map-letting-go.js';
