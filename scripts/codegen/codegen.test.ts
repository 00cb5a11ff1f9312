/**
 * The schema check and the codegen promise: schema/ is the single source of truth, so a change there
 * must show up in every generated artefact, and a broken schema must stop codegen with a clear message.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCodegen, validateSchemas } from './index.ts';
import { expandSchema, loadSchemas } from './load.ts';
import { tablesOf } from './emit-db.ts';
import { viewsOf } from './emit-db-code.ts';

// The tests mutate arbitrary nested schema JSON in place; `unknown` would need a cast per step.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = resolve(import.meta.dirname, '../..');
const schemaDir = join(root, 'schema');
// inside the project so the generated validators resolve ajv-formats from node_modules
const tmpRoot = join(root, '.tmp');
mkdirSync(tmpRoot, { recursive: true });
const made: string[] = [];

function copySchemas(): string {
  const dir = mkdtempSync(join(tmpRoot, 'codegen-test-'));
  made.push(dir);
  cpSync(schemaDir, join(dir, 'schema'), { recursive: true });
  mkdirSync(join(dir, 'common'), { recursive: true });
  cpSync(join(root, 'common/validator-runtime.ts'), join(dir, 'common/validator-runtime.ts'));
  return dir;
}
const file = (dir: string, rel: string) => join(dir, 'schema', rel);
const read = (dir: string, rel: string): Json =>
  JSON.parse(readFileSync(file(dir, rel), 'utf8')) as Json;
const write = (dir: string, rel: string, json: unknown) =>
  writeFileSync(file(dir, rel), JSON.stringify(json, null, 2));
function mutate(rel: string, change: (json: Json) => void): string {
  const dir = copySchemas();
  const json = read(dir, rel);
  change(json);
  write(dir, rel, json);
  return join(dir, 'schema');
}
const failure = (dir: string): string => {
  try {
    validateSchemas(dir);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('validateSchemas accepted a broken schema');
};

/** One codegen run of the real schema (into a copy), shared by the tests that compare with it. */
let baselineRun: Promise<string> | undefined;
function baseline(): Promise<string> {
  baselineRun ??= (async () => {
    const out = join(copySchemas(), 'src/generated');
    await runCodegen({ schemaDir, outDir: out });
    return out;
  })();
  return baselineRun;
}

/**
 * One codegen run of a copy of the schema with the edits the "follows the schema" tests look for
 * (a new template property, a narrower edit rule of desktops), shared by those tests.
 */
const NICKNAME = { type: 'string', maxLength: 20, 'x-ui': { column: true, order: 9 } };
let editedRun: Promise<string> | undefined;
function edited(): Promise<string> {
  editedRun ??= (async () => {
    const dir = copySchemas();
    const template = read(dir, 'entities/template.schema.json');
    template.properties.nickname = NICKNAME;
    template.$defs.create.properties.nickname = NICKNAME;
    write(dir, 'entities/template.schema.json', template);
    const desktop = read(dir, 'entities/desktop.schema.json');
    desktop['x-actions'].rules.edit.states = ['stopped'];
    write(dir, 'entities/desktop.schema.json', desktop);
    const out = join(dir, 'src/generated');
    await runCodegen({ schemaDir: join(dir, 'schema'), outDir: out });
    return out;
  })();
  return editedRun;
}

afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

describe('the real schema/', () => {
  const { files } = validateSchemas(schemaDir);
  const resources = files
    .filter((f) => f.json['x-resource'])
    .map((f) => ({ f, res: f.json['x-resource'] as Json }));

  it('passes the check and covers every entity of the spec', () => {
    const names = resources.map((r) => r.res.name as string).sort();
    for (const n of [
      'allowed',
      'bastion',
      'bookings',
      'config',
      'deployment-desktops',
      'deployments',
      'desktops',
      'direct-viewer',
      'media',
      'notifications',
      'planning',
      'profile',
      'recycle-bins',
      'reservables',
      'session',
      'storage',
      'templates',
      'viewer-defaults',
    ])
      expect(names).toContain(n);
  });

  it('every operation path starts with / and names only parameters its params schema declares', () => {
    let count = 0;
    for (const { f, res } of resources)
      for (const [op, def] of Object.entries((res.operations ?? {}) as Record<string, Json>)) {
        count++;
        expect(def.path, `${f.file} ${op}`).toMatch(/^\//);
        if (/\{/.test(def.path as string) && def.params === undefined)
          throw new Error(`${f.file}: ${op} has path parameters but no params schema`);
      }
    expect(count).toBeGreaterThan(120);
  });

  it('every resource with routes.list has x-roles.view, and view sets follow the role rules', () => {
    for (const { f, res } of resources) {
      if (!(res.routes as Json | undefined)?.list) continue;
      expect((f.json['x-roles'] as Json).view, f.file).toBeDefined();
    }
    const view = (name: string) =>
      (resources.find((r) => r.res.name === name)?.f.json['x-roles'] as Json).view as string[];
    const all = ['admin', 'manager', 'advanced', 'user'];
    for (const n of ['desktops', 'bookings', 'profile', 'storage', 'recycle-bins'])
      expect(view(n)).toEqual(all);
    for (const n of ['templates', 'deployments', 'media'])
      expect(view(n)).toEqual(['admin', 'manager', 'advanced']);
    expect(view('planning')).toEqual(['admin']);
  });

  it('every wire event an x-live names is declared in x-events', () => {
    const events = files.find((f) => f.file.startsWith('events/'))?.json['x-events'] as Json;
    for (const { f } of resources) {
      const live = f.json['x-live'] as Json | undefined;
      if (!live) continue;
      for (const w of [
        live.created,
        live.updated,
        live.deleted,
        ...Object.values((live.extra ?? {}) as Json),
      ].filter(Boolean))
        expect(events[w as string], `${f.file} ${String(w)}`).toBeDefined();
    }
  });
});

describe('codegen follows the schema', () => {
  it('a new property appears in types.ts, fields.ts and the validators', async () => {
    const out = await edited();

    const types = readFileSync(join(out, 'types.ts'), 'utf8');
    const block = (name: string) =>
      types.slice(types.indexOf(`export interface ${name} {`)).split('\n}')[0] ?? '';
    expect(block('Template')).toMatch(/^nickname\?: string$/m);
    expect(block('TemplateCreate')).toMatch(/^nickname\?: string$/m);
    expect(block('Desktop')).not.toMatch(/nickname/);

    const { fields } = (await import(pathToFileURL(join(out, 'fields.ts')).href)) as {
      fields: Record<string, Json[]>;
    };
    const meta = fields.Template?.find((f) => f.path === 'nickname');
    expect(meta).toMatchObject({
      type: 'string',
      maxLength: 20,
      column: true,
      order: 9,
      required: false,
    });
    expect(fields.TemplateCreate?.map((f) => f.path)).toContain('nickname');

    const validators = (await import(pathToFileURL(join(out, 'validators.js')).href)) as Record<
      string,
      (d: unknown) => boolean
    >;
    const create = { desktop_id: 'd1', name: 'My template' };
    expect(validators.TemplateCreate?.({ ...create, nickname: 'nick' })).toBe(true);
    expect(validators.TemplateCreate?.({ ...create, nickname: 42 })).toBe(false);
    expect(validators.TemplateCreate?.({ ...create, nickname: 'x'.repeat(21) })).toBe(false);
    expect(validators.Template?.({ id: 't1', name: 'T', nickname: 'nick' })).toBe(true);
    expect(validators.Template?.({ id: 't1', name: 'T', nickname: false })).toBe(false);

    // the untouched schema still rejects the property: the change came from the schema edit
    const base = await baseline();
    const original = (await import(pathToFileURL(join(base, 'validators.js')).href)) as Record<
      string,
      (d: unknown) => boolean
    >;
    expect(original.TemplateCreate?.({ ...create, nickname: 'nick' })).toBe(false);
    expect(original.TemplateCreate?.(create)).toBe(true);
  });

  it('is deterministic: two runs give identical bytes', async () => {
    const a = await baseline();
    const b = join(copySchemas(), 'src/generated');
    await runCodegen({ schemaDir, outDir: b });
    const names = readdirSync(a, { recursive: true, encoding: 'utf8' })
      .filter((n) => statSync(join(a, n)).isFile())
      .sort();
    expect(names).toEqual(
      readdirSync(b, { recursive: true, encoding: 'utf8' })
        .filter((n) => statSync(join(b, n)).isFile())
        .sort(),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'api.ts',
        'types.ts',
        'fields.ts',
        'validators.js',
        'events.ts',
        'constants.ts',
        'db.ts',
        'menu.ts',
        'operation-types.ts',
        'form-validators/desktop-create.js',
      ]),
    );
    for (const n of names)
      expect(readFileSync(join(a, n)).equals(readFileSync(join(b, n))), n).toBe(true);
  });
});

describe('the schema check fails with a clear message on', () => {
  it('an unknown x- keyword', () => {
    const dir = mutate(
      'entities/media.schema.json',
      (j) => (j.properties.name['x-uii'] = { column: true }),
    );
    expect(failure(dir)).toMatch(/media\.schema\.json.*unknown keyword.*x-uii/s);
  });

  it('a misspelt JSON Schema keyword', () => {
    const dir = mutate('entities/booking.schema.json', (j) => (j.properties.title.maxLenght = 10));
    expect(failure(dir)).toMatch(/booking\.schema\.json.*unknown keyword.*maxLenght/s);
  });

  it('a shared definition removed after the files using it passed the check once', () => {
    // The first check compiled every file; the second must compile again each file that reaches
    // the changed one, although its own content is the same.
    validateSchemas(schemaDir);
    const dir = mutate('common/defs.schema.json', (j) => delete j.$defs.epochSeconds);
    expect(failure(dir)).toMatch(/media\.schema\.json.*epochSeconds/s);
  });

  it('a duplicate $id', () => {
    const dir = copySchemas();
    cpSync(
      file(dir, 'entities/storage.schema.json'),
      file(dir, 'entities/storage-copy.schema.json'),
    );
    const msg = failure(join(dir, 'schema'));
    expect(msg).toMatch(
      /duplicate \$id https:\/\/vdi-portal\.dev\/schema\/entities\/storage\.json/,
    );
    expect(msg).toMatch(/storage-copy\.schema\.json/);
  });

  it('an x-actions table naming an unknown state', () => {
    const dir = mutate(
      'entities/media.schema.json',
      (j) => (j['x-actions'].table.flying = ['delete']),
    );
    expect(failure(dir)).toMatch(
      /media\.schema\.json: x-actions table names unknown state "flying"/,
    );
  });

  it('an action naming an unknown operation', () => {
    const dir = mutate(
      'entities/recycle-bin.schema.json',
      (j) => (j['x-actions'].actions.restore.operation = 'teleport'),
    );
    expect(failure(dir)).toMatch(
      /recycle-bin\.schema\.json: action restore names unknown operation teleport/,
    );
  });

  it('an x-roles set with a role that does not exist', () => {
    const dir = mutate('entities/template.schema.json', (j) =>
      j['x-roles'].manage.push('superuser'),
    );
    const msg = failure(dir);
    expect(msg).toMatch(/template\.schema\.json.*x-roles/s);
    expect(msg).toMatch(/allowed values/);
  });

  it('an operation access naming a missing role set', () => {
    const dir = mutate(
      'entities/deployment.schema.json',
      (j) => (j['x-resource'].operations.startAll.access = 'owners'),
    );
    expect(failure(dir)).toMatch(
      /deployment\.schema\.json: operation startAll names access "owners" which is not a role set/,
    );
  });

  it('an event payload ref that does not resolve', () => {
    const dir = mutate(
      'events/events.schema.json',
      (j) => (j['x-events'].media_add.payload = '../entities/nope.json'),
    );
    expect(failure(dir)).toMatch(
      /events\.schema\.json: event media_add payload \.\.\/entities\/nope\.json does not resolve/,
    );
  });

  it('an x-live wire event that is not declared', () => {
    const dir = mutate(
      'entities/bastion.schema.json',
      (j) => (j['x-live'].created = 'target_added'),
    );
    expect(failure(dir)).toMatch(/bastion\.schema\.json: x-live names wire event target_added/);
  });

  it('an x-constraints rule naming an unknown field', () => {
    const dir = mutate(
      'entities/booking.schema.json',
      (j) => (j['x-constraints'].endAfterStart.fields = ['start', 'finish']),
    );
    expect(failure(dir)).toMatch(
      /booking\.schema\.json: x-constraints endAfterStart field finish is not in #\/\$defs\/create/,
    );
  });

  it('a path parameter missing from the params schema', () => {
    const dir = mutate(
      'entities/storage.schema.json',
      (j) =>
        (j['x-resource'].operations.increase.path =
          '/storage/{id}/priority/{prio}/increase/{increment}'),
    );
    expect(failure(dir)).toMatch(
      /storage\.schema\.json: operation increase path parameter \{prio\} is not in its params schema/,
    );
  });

  it('an operation with path parameters and no params schema', () => {
    const dir = mutate('entities/desktop.schema.json', (j) => {
      delete j['x-resource'].operations.show.params;
    });
    expect(failure(dir)).toMatch(
      /desktop\.schema\.json: operation show has path parameters but no params schema/,
    );
  });

  it('two operations on the same endpoint', () => {
    const dir = mutate(
      'entities/media.schema.json',
      (j) =>
        (j['x-resource'].operations.again = { method: 'GET', path: '/media', access: 'token' }),
    );
    expect(failure(dir)).toMatch(
      /media\.schema\.json: operation again \(api GET \/media\) duplicates media\.list/,
    );
  });

  it('a form route taking its token from the query for a call that names no token types', () => {
    const dir = mutate(
      'entities/session.schema.json',
      (j) => (j['x-resource'].forms.signup.token = 'query'),
    );
    expect(failure(dir)).toMatch(
      /session\.schema\.json: form signup takes its token from the query but signup names no tokenTypes/,
    );
  });

  it('a form route showing the answer of a call that answers nothing', () => {
    const dir = mutate('entities/session.schema.json', (j) => {
      j['x-resource'].forms.verifyEmail.after = 'answer';
      delete j['x-resource'].operations.verifyEmail.response;
    });
    expect(failure(dir)).toMatch(
      /session\.schema\.json: form verifyEmail shows the answer of verifyEmail, which has none/,
    );
  });

  it('a form route with both after and then', () => {
    const dir = mutate(
      'entities/session.schema.json',
      (j) => (j['x-resource'].forms.signup.then = 'register'),
    );
    expect(failure(dir)).toMatch(/session\.schema\.json: form signup has both after and then/);
  });

  it('a resource with a list route but no view role set', () => {
    const dir = mutate('entities/storage.schema.json', (j) => delete j['x-roles'].view);
    expect(failure(dir)).toMatch(
      /storage\.schema\.json: resource storage has routes\.list but no x-roles\.view set/,
    );
  });

  it('a list preview whose list operation takes no limit', () => {
    const dir = mutate('entities/desktop.schema.json', (j) => {
      delete j.$defs.listQuery.properties.limit;
    });
    expect(failure(dir)).toMatch(
      /desktop\.schema\.json: x-ui\.list preview needs a limit in the list operation's query/,
    );
  });

  it('an action asking a field its operation does not take', () => {
    const dir = mutate('entities/profile.schema.json', (j) =>
      j['x-actions'].actions.editName.fields.push('nickname'),
    );
    expect(failure(dir)).toMatch(
      /profile\.schema\.json: action editName asks nickname, which is not a top-level input of update/,
    );
  });

  it('an action whose then-route or section does not exist', () => {
    const dir = mutate('entities/profile.schema.json', (j) => {
      j['x-actions'].actions.importMigration.then = 'nowhere';
      j['x-actions'].actions.resetVpn.section = 'attic';
    });
    const msg = failure(dir);
    expect(msg).toMatch(/action importMigration then-route nowhere does not exist/);
    expect(msg).toMatch(/action resetVpn is drawn in section attic, which no property has/);
  });

  it('an action showing a result its operation does not answer', () => {
    const dir = mutate('entities/profile.schema.json', (j) => {
      delete j['x-resource'].operations.createApiKey.response;
    });
    expect(failure(dir)).toMatch(
      /action createApiKey shows a result, but createApiKey answers none/,
    );
  });

  it('an action whose result hint waits for a field that is not a boolean of its answer', () => {
    const dir = mutate('entities/user.schema.json', (j) => {
      j['x-actions'].actions.importCsv.resultHintWhen = 'created';
    });
    expect(failure(dir)).toMatch(
      /action importCsv shows its hint when created, which is not a boolean field of the result it shows/,
    );
  });
});

describe('the named state sets (x-state-sets) and state looks (x-ui.states)', () => {
  it('a set derived from an x-actions rule follows the rule into policy.ts', async () => {
    const out = await edited();
    const policy = readFileSync(join(out, 'policy.ts'), 'utf8');
    expect(policy).toContain("editable: ['stopped'],");
    expect(policy).toContain("startable: ['stopped', 'failed'],");
    expect(policy).toContain("roles = ['admin', 'manager', 'advanced', 'user']");
  });

  it('rejects a set listing a value the enum lacks', () => {
    const dir = mutate('common/defs.schema.json', (json) => {
      json.$defs.desktopState['x-state-sets'].running.push('sprinting');
    });
    expect(failure(dir)).toMatch(/x-state-sets running lists sprinting/);
  });

  it('rejects a set naming a rule that does not exist', () => {
    const dir = mutate('common/defs.schema.json', (json) => {
      json.$defs.desktopState['x-state-sets'].editable = { rule: 'desktops.nothing' };
    });
    expect(failure(dir)).toMatch(/names rule desktops\.nothing, which does not exist/);
  });

  it('rejects a state that looks different in two enums', () => {
    const dir = mutate('entities/media.schema.json', (json) => {
      json.$defs.status['x-ui'].states.maintenance = { color: 'pink', icon: 'circle' };
    });
    expect(failure(dir)).toMatch(/maintenance looks unlike the maintenance of/);
  });
});

describe('one schema file per stored resource', () => {
  it('x-in: true copies a property into the $defs the show, create and update name', () => {
    const { json, problems } = expandSchema({
      $id: 'https://vdi-portal.dev/schema/entities/thing.json',
      properties: { tag: { type: 'string', 'x-in': true, 'x-db': true } },
      $defs: { info: {}, create: {}, update: {}, other: {} },
      'x-resource': {
        name: 'things',
        operations: {
          show: { response: '#/$defs/info' },
          create: { request: '#/$defs/create' },
          update: { request: '#/$defs/update' },
          list: { response: '#/$defs/other' },
        },
      },
    });
    expect(problems).toEqual([]);
    const defs = json.$defs as Record<string, { properties?: Json }>;
    for (const def of ['info', 'create', 'update'])
      expect(defs[def]?.properties?.tag, def).toEqual({ type: 'string' });
    expect(defs.other?.properties).toBeUndefined();
  });

  it("x-in: true reaches the answer that fills the edit form (editPrefill) too, once when it is the show's", () => {
    const thing = (editPrefill: string) =>
      expandSchema({
        $id: 'https://vdi-portal.dev/schema/entities/thing.json',
        properties: { tag: { type: 'string', 'x-in': true, 'x-db': true } },
        $defs: { detail: {}, info: {} },
        'x-resource': {
          name: 'things',
          editPrefill,
          operations: {
            show: { response: '#/$defs/detail' },
            info: { response: '#/$defs/info' },
          },
        },
      });
    const apart = thing('info');
    expect(apart.problems).toEqual([]);
    const defs = apart.json.$defs as Record<string, { properties?: Json }>;
    expect(defs.detail?.properties?.tag).toEqual({ type: 'string' });
    expect(defs.info?.properties?.tag).toEqual({ type: 'string' });
    expect(thing('show').problems).toEqual([]);
  });

  it('x-db.from maps a shape property to a stored property of another name, and must name one', () => {
    const info = tablesOf(loadSchemas(schemaDir))
      .find((t) => t.table === 'deployments')
      ?.shapes.find((s) => s.type === 'DeploymentInfo');
    expect(info?.fields.map((c) => [c.name, c.key])).toEqual(
      expect.arrayContaining([
        ['name', 'desktopName'],
        ['tag', 'id'],
        ['tag_name', 'name'],
        ['tag_visible', 'visible'],
      ]),
    );
    for (const from of ['nothing', 'allowed']) {
      const broken = mutate('entities/deployment.schema.json', (json) => {
        json.$defs.info.properties.name['x-db'] = { from };
      });
      expect(() => tablesOf(loadSchemas(broken))).toThrow(
        `entities/deployment.schema.json: $defs/info/name is read from ${from}, which is not a stored property of the same shape`,
      );
    }
  });

  it('a computed property is read, not stored, and secrets stay out of the snapshot', () => {
    const groups = tablesOf(loadSchemas(schemaDir)).find((t) => t.table === 'groups');
    expect(groups?.entity).toBe('AdminGroup');
    expect(groups?.computed.map((c) => c.name).sort()).toEqual(['category_name', 'users']);
    expect(groups?.columns.map((c) => c.column)).not.toContain('users');
    expect(groups?.columns.find((c) => c.name === 'category')?.column).toBe('category_id');
    const users = tablesOf(loadSchemas(schemaDir)).find((t) => t.table === 'users');
    // credentials are storage-only columns: never a wire property
    for (const column of ['password_hash', 'api_key_hash', 'wg_private_key', 'password_reset_jti'])
      expect(users?.columns.find((c) => c.column === column)?.wire, column).toBeNull();
  });

  it("a view reads the stored properties of another file's table by name", () => {
    const files = loadSchemas(schemaDir);
    const tables = tablesOf(files);
    const { views, problems } = viewsOf(files, tables);
    expect(problems).toEqual([]);
    const reservable = views.find((v) => v.entity === 'Reservable');
    expect(reservable?.table.entity).toBe('AdminReservable');
    expect(reservable?.fields.map((c) => c.name)).toEqual([
      'id',
      'name',
      'model',
      'brand',
      'description',
    ]);
    const broken = mutate('entities/reservable.schema.json', (json) => {
      json.properties.architecture['x-db'] = true;
    });
    const again = loadSchemas(broken);
    expect(viewsOf(again, tablesOf(again)).problems).toEqual([
      'entities/reservable.schema.json: architecture is not a wire property of reservable_items (a view reads them)',
    ]);
  });
});
