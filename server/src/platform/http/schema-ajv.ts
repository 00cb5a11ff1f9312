/**
 * The one shared ajv factory: used by codegen (precompiled validators for browser and server),
 * by the schema check and by the server's request validation. Strict mode stays on; our x-*
 * keywords are declared from schema/meta/vocabulary.schema.json, so a typo is still an error.
 * Browser code never imports this file: it uses the precompiled validators in src/generated.
 */
import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import vocabulary from '../../../../schema/meta/vocabulary.schema.json' with { type: 'json' };

export const SCHEMA_BASE = 'https://vdi-portal.dev/schema/';

/** Creates an ajv instance with formats and every x-* keyword of the vocabulary declared. */
export function createAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({
    strict: true,
    allErrors: true,
    allowUnionTypes: true,
    discriminator: false,
    code: { source: true, esm: true, lines: false },
    ...options,
  });
  addFormats(ajv);
  for (const [keyword, metaSchema] of Object.entries(vocabulary.keywords)) {
    ajv.addKeyword({ keyword, metaSchema: { ...metaSchema, $defs: vocabulary.$defs } });
  }
  return ajv;
}
