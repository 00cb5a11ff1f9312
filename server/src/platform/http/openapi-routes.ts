/** GET /api/v3/openapi.json, built once from the operation table and the schemas, with the portal's version. */
import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from './openapi.ts';
import { API_BASE } from './route.ts';
import { portalVersion } from '../lib/version.ts';

export default async function openapiRoutes(app: FastifyInstance) {
  const doc = JSON.stringify(buildOpenApi(app.access, portalVersion));
  app.get(`${API_BASE}/openapi.json`, async (_request, reply) =>
    reply.type('application/json').send(doc),
  );
}
