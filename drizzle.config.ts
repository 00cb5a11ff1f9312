/**
 * drizzle-kit reads the tables codegen emits from the schema (x-db) and writes the SQL migrations
 * the server applies at boot: `npm run db:generate` after a storage change in schema/.
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/generated/db.ts',
  out: './server/migrations',
});
