import { catalogRoutes } from './catalog-routes.js';
import { engineRoutes } from './engine-routes.js';
import type { HttpRoute } from './http-route.js';
import { testingRoutes } from './testing-routes.js';
import { triggerRoutes } from './trigger-routes.js';

/**
 * Every public HTTP route, gathered from each service's route file. The gateway serves exactly
 * these (plus its own organization and API key routes).
 */
export const serviceRoutes: HttpRoute[] = [...engineRoutes, ...catalogRoutes, ...triggerRoutes, ...testingRoutes];
