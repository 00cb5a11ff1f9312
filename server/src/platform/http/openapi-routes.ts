/** GET /api/v3/openapi.json, built once from the operation table and the schemas. */
import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from './openapi.ts';
import { API_BASE } from './route.ts';

export default async function openapiRoutes(app: FastifyInstance) {
  const doc = JSON.stringify(buildOpenApi(app.access, '0.1.0'));
  app.get(`${API_BASE}/openapi.json`, async (_request, reply) =>
    reply.type('application/json').send(doc),
  );
}
