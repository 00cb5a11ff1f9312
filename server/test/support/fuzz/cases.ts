/**
 * Hostile requests for one operation of the table, built from its path, its query schema and its
 * request schema: hostile path parameters, hostile values at every property of the body (wrong
 * types, NUL, lone surrogates, 1 MB strings, deep nesting, extreme numbers, unknown fields, ids of
 * another user's objects), malformed bodies and wrong content types, stray query parameters.
 *
 * Each case says whether the server must refuse it (`reject`: any 2xx is a failure) or only
 * survive it (`survive`: a clean answer of any status). A case must be refused when the schema
 * the server validates with refuses it, or whatever the schema says when it carries a NUL or a
 * lone surrogate, nests 40 levels or more, names an object of another user, or is a 1 MB string
 * where the schema sets no maxLength.
 */
import type { ValidateFunction } from 'ajv';
import type { Operation } from '../../../../src/generated/api.ts';
import * as validators from '../../../../src/generated/validators.js';
import {
  decodeMultipart,
  decodeUrlencoded,
  multipart,
  MULTIPART_BOUNDARY,
  percentEncode,
  urlencoded,
  type FormEntry,
} from './encoding.ts';
import {
  admits,
  bodyWith,
  isIdSite,
  resolve,
  sample,
  schemaOfType,
  sitesOf,
  typesOf,
  type Json,
  type JsonObject,
  type PathSegment,
  type ReferenceOf,
  type Resolved,
  type Site,
} from './schema-walk.ts';

export type Expectation = 'reject' | 'survive';
export type CaseGroup = 'path' | 'query' | 'body' | 'request' | 'valid';

export interface FuzzCase {
  group: CaseGroup;
  /** the hostile value's family (nul, surrogate, foreign...), for sampling and grouping */
  kind: string;
  /** readable: `path id=%00`, `body hardware.isos[0].id=foreign media` */
  label: string;
  expect: Expectation;
  url: string;
  payload?: string | Buffer;
  contentType?: string;
  /** an Authorization header of its own instead of the caller's token */
  authorization?: string;
}

/** An id of an object that belongs to another user, and what it is. */
export interface ForeignId {
  label: string;
  id: string;
}

export interface CaseContext {
  op: Operation;
  /** `/api/v3` or `/authentication` */
  prefix: string;
  /** a valid value for every path parameter, as the owner of the target would send it */
  params: Readonly<Record<string, string>>;
  /** path parameters that name an object by id */
  idParams: ReadonlySet<string>;
  foreign: readonly ForeignId[];
  /** real ids of the owner's objects for id properties of bodies */
  referenceOf: ReferenceOf;
}

/** Families of hostile values that must be refused whatever the schema says. */
const ALWAYS_REJECTED = new Set([
  'nul',
  'surrogate',
  'deep40',
  'deep20000',
  'foreign',
  'unbounded-mb',
]);

const NUL = '\u0000';
const LONE_SURROGATE = '\ud800';
const ONE_MB = 1_000_000;
const DEEP = [40, 20_000] as const;
const EXTREME_NUMBERS: readonly [string, number][] = [
  ['-1', -1],
  ['1e308', 1e308],
  ['2**53+1', 2 ** 53 + 1],
];
const WRONG_TYPES: readonly [string, Json][] = [
  ['string', 'fuzz'],
  ['integer', 12345],
  ['boolean', true],
  ['null', null],
  ['object', { fuzz: 1 }],
  ['array', ['fuzz']],
];

const validatorMap = validators as unknown as Readonly<
  Record<string, ValidateFunction | undefined>
>;

/** The generated validator of a type: the same schema the server validates with. */
function validatorOf(typeName: string | null): ValidateFunction | undefined {
  return typeName ? validatorMap[typeName] : undefined;
}

function expectation(kind: string, valid: boolean | undefined): Expectation {
  return ALWAYS_REJECTED.has(kind) || valid === false ? 'reject' : 'survive';
}

const insertMiddle = (text: string, inserted: string) => {
  const mid = Math.floor(text.length / 2);
  return text.slice(0, mid) + inserted + text.slice(mid);
};

export function formatPath(path: readonly PathSegment[]): string {
  return path
    .map((segment, i) =>
      typeof segment === 'number' ? `[${segment}]` : i ? `.${segment}` : segment,
    )
    .join('');
}

function deepJson(depth: number, asArray: boolean): string {
  return asArray
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** The query string of a query object (lists repeat their key). */
function queryEntries(query: Json): FormEntry[] {
  if (query === null || typeof query !== 'object' || Array.isArray(query)) return [];
  return Object.entries(query).flatMap(([k, v]): FormEntry[] => {
    if (Array.isArray(v)) return v.map((item): FormEntry => [k, String(item)]);
    if (v !== null && typeof v === 'object') return [];
    return [[k, String(v)]];
  });
}

/** The flat string entries of a JSON body, as a form would carry them. */
function formEntriesOf(body: Json): FormEntry[] {
  return queryEntries(body);
}

/** The coercion the server applies to query and path strings (numbers, booleans, lists). */
function coerceStrings(raw: Record<string, string | string[]>, root: Resolved): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(raw)) {
    const prop = root.schema.properties?.[key];
    const types = prop ? typesOf(resolve(prop, root.base)) : [];
    const one = (v: string): Json => {
      if ((admits(types, 'number') || admits(types, 'integer')) && types.length && v !== '')
        return Number.isNaN(Number(v)) ? v : Number(v);
      if (types.includes('boolean') && (v === 'true' || v === 'false')) return v === 'true';
      return v;
    };
    out[key] = Array.isArray(value)
      ? value.map(one)
      : types.includes('array') && !types.includes('string')
        ? [one(value)]
        : one(value);
  }
  return out;
}

interface Builder {
  ctx: CaseContext;
  baseQuery: FormEntry[];
  /** the valid body, sent with every case that is hostile elsewhere */
  body: Pick<FuzzCase, 'payload' | 'contentType'>;
  url(param?: readonly [string, string], query?: readonly FormEntry[], rawQuery?: string): string;
}

function builder(ctx: CaseContext): Builder {
  const baseQuery = ctx.op.query
    ? queryEntries(sample(schemaOfType(ctx.op.query), ctx.referenceOf))
    : [];
  return {
    ctx,
    baseQuery,
    body: validBody(ctx),
    url(param, query = baseQuery, rawQuery) {
      const path = ctx.op.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
        param && param[0] === name ? param[1] : percentEncode(ctx.params[name] ?? ''),
      );
      const qs = [urlencoded(query), rawQuery].filter(Boolean).join('&');
      return `${ctx.prefix}${path}${qs ? `?${qs}` : ''}`;
    },
  };
}

/** Path values refused whatever the parameter: no valid id or name has them. */
const PATH_ALWAYS_REJECTED = new Set(['nul', 'surrogate', 'bad-escape', 'traversal', 'long']);

function decoded(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Hostile path parameter values, already percent-encoded as they go on the wire. */
const PATH_VALUES: readonly { kind: string; raw: (valid: string) => string }[] = [
  { kind: 'nul', raw: () => '%00' },
  { kind: 'nul', raw: (v) => `${percentEncode(v)}%00` },
  { kind: 'traversal', raw: () => '..%2f..' },
  { kind: 'traversal', raw: () => '..%2F..%2F..%2F..%2Fetc%2Fpasswd' },
  { kind: 'long', raw: () => 'a'.repeat(10_240) },
  { kind: 'surrogate', raw: () => '%ED%A0%80' },
  { kind: 'surrogate', raw: (v) => `${percentEncode(v)}%ED%B0%80` },
  { kind: 'bad-escape', raw: () => '%E0%A4%A' },
  { kind: 'bad-escape', raw: (v) => `${percentEncode(v)}%` },
  { kind: 'pattern', raw: () => '.*' },
  { kind: 'pattern', raw: () => 'ALL' },
  { kind: 'pattern', raw: () => '*' },
  { kind: 'number', raw: () => '-1' },
  { kind: 'number', raw: () => '0' },
  { kind: 'number', raw: () => '1e308' },
  { kind: 'number', raw: () => '9007199254740993' },
  { kind: 'number', raw: () => '99999999999999999999999999' },
  { kind: 'empty', raw: () => '' },
  { kind: 'empty', raw: () => '%20' },
  { kind: 'empty', raw: () => 'null' },
  { kind: 'empty', raw: () => 'undefined' },
  { kind: 'proto', raw: () => '__proto__' },
];

/**
 * Every path parameter in turn gets every hostile value (ids also another user's ids); the rest
 * of the request is valid, so nothing but the parameter can be the reason for a refusal. An id
 * parameter refuses them all (none names an object); another parameter refuses what its schema
 * refuses, and NUL, surrogates, malformed escapes, traversal and 10 kB values in any case.
 */
function pathCases(b: Builder): FuzzCase[] {
  const { ctx } = b;
  const paramsRoot = ctx.op.params ? schemaOfType(ctx.op.params) : undefined;
  const validate = validatorOf(ctx.op.params);
  const expectFor = (name: string, kind: string, value: string): Expectation => {
    if (PATH_ALWAYS_REJECTED.has(kind) || ctx.idParams.has(name)) return 'reject';
    if (!paramsRoot || !validate) return 'survive';
    return validate(coerceStrings({ ...ctx.params, [name]: decoded(value) }, paramsRoot))
      ? 'survive'
      : 'reject';
  };
  const cases: FuzzCase[] = [];
  for (const name of Object.keys(ctx.params)) {
    const valid = ctx.params[name] ?? '';
    for (const { kind, raw } of PATH_VALUES) {
      const value = raw(valid);
      const shown = value.length > 40 ? `${value.slice(0, 12)}…(${value.length} chars)` : value;
      cases.push({
        group: 'path',
        kind,
        label: `path ${name}=${shown || '(empty)'}`,
        expect: expectFor(name, kind, value),
        url: b.url([name, value]),
        ...b.body,
      });
    }
    if (ctx.idParams.has(name))
      for (const f of ctx.foreign)
        cases.push({
          group: 'path',
          kind: 'foreign',
          label: `path ${name}=${f.label}`,
          expect: 'reject',
          url: b.url([name, percentEncode(f.id)]),
          ...b.body,
        });
  }
  return cases;
}

/** Hostile values of every declared query parameter, the rest of the query valid. */
function queryCases(b: Builder): FuzzCase[] {
  const { op } = b.ctx;
  if (!op.query) return [];
  const root = schemaOfType(op.query);
  const validate = validatorOf(op.query);
  const cases: FuzzCase[] = [];
  const push = (kind: string, label: string, query: FormEntry[], rawQuery?: string) => {
    const qs = [urlencoded(query), rawQuery].filter(Boolean).join('&');
    const decoded = coerceStrings(decodeUrlencoded(qs), root);
    cases.push({
      group: 'query',
      kind,
      label: `query ${label}`,
      // A malformed escape or the bytes of a lone surrogate in a declared parameter are refused.
      expect:
        kind === 'bad-escape' || kind === 'surrogate-bytes'
          ? 'reject'
          : expectation(kind, validate?.(decoded)),
      url: b.url(undefined, query, rawQuery),
      ...b.body,
    });
  };
  for (const site of sitesOf(root, 1)) {
    const key = String(site.path[0]);
    const rest = b.baseQuery.filter(([k]) => k !== key);
    const valid = String(b.baseQuery.find(([k]) => k === key)?.[1] ?? 'fuzz');
    push('nul', `${key}=NUL`, [...rest, [key, insertMiddle(valid, NUL)]]);
    push('surrogate-bytes', `${key}=%ED%A0%80`, rest, `${key}=${percentEncode(valid)}%ED%A0%80`);
    push('bad-escape', `${key}=%E0%A4%A`, rest, `${key}=${percentEncode(valid)}%E0%A4%A`);
    push('long', `${key}=10 kB`, [...rest, [key, 'a'.repeat(10_240)]]);
    push('pattern', `${key}=ALL`, [...rest, [key, 'ALL']]);
    push('number', `${key}=-1`, [...rest, [key, '-1']]);
    push('number', `${key}=1e308`, [...rest, [key, '1e308']]);
    push('repeated', `${key} twice`, [...rest, [key, valid], [key, 'fuzz']]);
    if (isIdSite(site))
      for (const f of b.ctx.foreign) push('foreign', `${key}=${f.label}`, [...rest, [key, f.id]]);
  }
  push('unknown', 'unknown parameter', [...b.baseQuery, ['__fuzz_unknown', '1']]);
  return cases;
}

/** A hostile value for one site: its family, a label, the value or (nesting) raw JSON text. */
type Mutation = { kind: string; label: string } & ({ value: Json } | { raw: string });

/** A 1 MB string is refused where the schema sets no maxLength: such a string has no bound. */
function megabyte(site: Site): { kind: string; label: string } {
  return site.node.schema.maxLength === undefined
    ? { kind: 'unbounded-mb', label: '1 MB string (no maxLength)' }
    : { kind: 'mb', label: '1 MB string' };
}

function siteMutations(
  site: Site,
  index: number,
  referenceOf: ReferenceOf,
  foreign: readonly ForeignId[],
): Mutation[] {
  const types = typesOf(site.node);
  const valid = sample(site.node, referenceOf, site.path, site.key);
  const text = typeof valid === 'string' && valid.length > 1 ? valid : 'fuzz sample';
  const out: Mutation[] = [];
  const wrong = WRONG_TYPES.filter(([type]) => types.length > 0 && !admits(types, type));
  for (const k of [index, index + 1].map((i) => i % Math.max(wrong.length, 1))) {
    const candidate = wrong[k];
    if (candidate && !out.some((m) => m.label === `wrong type ${candidate[0]}`))
      out.push({ kind: 'wrong-type', label: `wrong type ${candidate[0]}`, value: candidate[1] });
  }
  if (site.node.schema.enum) out.push({ kind: 'enum', label: '"ALL"', value: 'ALL' });
  if (admits(types, 'string')) {
    out.push({ kind: 'nul', label: 'NUL', value: insertMiddle(text, NUL) });
    out.push({
      kind: 'surrogate',
      label: 'lone surrogate',
      value: insertMiddle(text, LONE_SURROGATE),
    });
    out.push({ ...megabyte(site), value: 'a'.repeat(ONE_MB) });
  }
  if (admits(types, 'number'))
    for (const [label, value] of EXTREME_NUMBERS) out.push({ kind: 'number', label, value });
  const asArray = types.length > 0 && types.every((t) => t === 'array');
  for (const depth of DEEP)
    out.push({
      kind: `deep${depth}`,
      label: `nested ${depth} deep`,
      raw: deepJson(depth, asArray),
    });
  if (
    valid !== null &&
    typeof valid === 'object' &&
    !Array.isArray(valid) &&
    site.node.schema.properties
  )
    out.push({ kind: 'unknown', label: 'unknown field', value: { ...valid, __fuzz_unknown: 1 } });
  if (isIdSite(site))
    for (const f of foreign) out.push({ kind: 'foreign', label: f.label, value: f.id });
  return out;
}

const RAW_MARKER = '__fuzz_raw_value__';

function jsonBodyCases(b: Builder, request: string): FuzzCase[] {
  const { ctx } = b;
  const root = schemaOfType(request);
  const validate = validatorOf(request);
  const url = b.url();
  const base = sample(root, ctx.referenceOf);
  const baseText = JSON.stringify(base);
  const cases: FuzzCase[] = [];
  const push = (
    kind: string,
    label: string,
    payload: string,
    expect: Expectation,
    contentType = 'application/json',
  ) =>
    cases.push({ group: 'body', kind, label: `body ${label}`, expect, url, payload, contentType });

  sitesOf(root).forEach((site, index) => {
    for (const m of siteMutations(site, index, ctx.referenceOf, ctx.foreign)) {
      const label = `${formatPath(site.path)}=${m.label}`;
      if ('raw' in m) {
        const body = bodyWith(root, ctx.referenceOf, site.path, RAW_MARKER);
        push(m.kind, label, JSON.stringify(body).replace(`"${RAW_MARKER}"`, m.raw), 'reject');
      } else {
        const body = bodyWith(root, ctx.referenceOf, site.path, m.value);
        push(m.kind, label, JSON.stringify(body), expectation(m.kind, validate?.(body)));
      }
    }
  });

  const objectBase = base !== null && typeof base === 'object' && !Array.isArray(base);
  const withKey = (entry: string) =>
    objectBase && baseText !== '{}' ? `{${entry},${baseText.slice(1)}` : `{${entry}}`;
  const unknown = objectBase ? { ...base, __fuzz_unknown: 1 } : { __fuzz_unknown: 1 };
  push(
    'unknown',
    'unknown root field',
    JSON.stringify(unknown),
    expectation('unknown', validate?.(unknown)),
  );
  push('proto', '__proto__ key', withKey('"__proto__":{"polluted":true}'), 'reject');
  push(
    'proto',
    'constructor.prototype key',
    withKey('"constructor":{"prototype":{"polluted":true}}'),
    'reject',
  );
  // Object keys are text like values: a NUL or a lone surrogate in one is refused (400), at the
  // root and inside the first object-valued field, high and low surrogates alike.
  const rootKeys: [string, string][] = [
    ['key-nul', 'k\\u0000'],
    ['key-surrogate', '\\ud800'],
  ];
  const nestedKeys: [string, string][] = [
    ['key-nul', '\\u0000'],
    ['key-surrogate', 'k\\udfff'],
  ];
  for (const [kind, key] of rootKeys)
    push(kind, `root key "${key}"`, withKey(`"${key}":"fuzz"`), 'reject');
  const nestedField = objectBase
    ? Object.entries(base).find(
        ([, v]) => v !== null && typeof v === 'object' && !Array.isArray(v),
      )?.[0]
    : undefined;
  if (nestedField !== undefined && objectBase)
    for (const [kind, key] of nestedKeys) {
      const inner = JSON.stringify((base as Record<string, Json>)[nestedField]);
      const text = JSON.stringify({ ...base, [nestedField]: RAW_MARKER }).replace(
        `"${RAW_MARKER}"`,
        inner === '{}' ? `{"${key}":1}` : `{"${key}":1,${inner.slice(1)}`,
      );
      push(kind, `${nestedField} key "${key}"`, text, 'reject');
    }
  push('malformed', 'truncated JSON', '{"fuzz":', 'reject');
  push('malformed', 'trailing garbage', `${baseText}}`, 'reject');
  push('malformed', 'empty body', '', 'reject');
  push('malformed', 'single quotes', `{'fuzz': 1}`, 'reject');
  for (const text of ['null', '[]', '"fuzz"', '12345'] as const)
    push(
      'root-type',
      `root ${text}`,
      text,
      expectation('root-type', validate?.(JSON.parse(text) as Json)),
    );
  for (const depth of DEEP)
    push(`deep${depth}`, `root nested ${depth} deep`, deepJson(depth, true), 'reject');
  push(
    'too-large',
    '6 MiB body',
    withKey(`"__fuzz_pad":"${'a'.repeat(6 * 1024 * 1024)}"`),
    'reject',
  );
  // A fresh valid body each: every one could succeed, none may fail for a name another one took.
  const fresh = () => sample(root, ctx.referenceOf);
  push('content-type', 'as text/plain', JSON.stringify(fresh()), 'reject', 'text/plain');
  push('content-type', 'as application/xml', JSON.stringify(fresh()), 'reject', 'application/xml');
  push(
    'content-type',
    'as urlencoded form',
    urlencoded(formEntriesOf(fresh())),
    'reject',
    'application/x-www-form-urlencoded',
  );
  cases.push({
    group: 'body',
    kind: 'content-type',
    label: 'body as multipart form',
    expect: 'reject',
    url,
    payload: multipart(formEntriesOf(fresh())),
    contentType: `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`,
  });
  cases.push({
    group: 'body',
    kind: 'content-type',
    label: 'body without content type',
    expect: 'reject',
    url,
    payload: JSON.stringify(fresh()),
  });
  return cases;
}

function formBodyCases(b: Builder, request: string): FuzzCase[] {
  const { ctx } = b;
  const root = schemaOfType(request);
  const validate = validatorOf(request);
  const url = b.url();
  const base = formEntriesOf(sample(root, ctx.referenceOf));
  const cases: FuzzCase[] = [];
  const both = (kind: string, label: string, entries: FormEntry[]) => {
    const text = urlencoded(entries);
    cases.push({
      group: 'body',
      kind,
      label: `form ${label}`,
      expect: expectation(kind, validate?.(decodeUrlencoded(text))),
      url,
      payload: text,
      contentType: 'application/x-www-form-urlencoded',
    });
    cases.push({
      group: 'body',
      kind,
      label: `multipart ${label}`,
      expect: expectation(kind, validate?.(decodeMultipart(entries))),
      url,
      payload: multipart(entries),
      contentType: `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`,
    });
  };
  for (const site of sitesOf(root, 1)) {
    const key = String(site.path[0]);
    const rest = base.filter(([k]) => k !== key);
    const valid = base.find(([k]) => k === key)?.[1];
    const text = valid !== undefined && valid.length > 1 ? valid : 'fuzz sample';
    const set = (value: string): FormEntry[] => [...rest, [key, value]];
    both('nul', `${key}=NUL`, set(insertMiddle(text, NUL)));
    both('surrogate', `${key}=lone surrogate`, set(insertMiddle(text, LONE_SURROGATE)));
    const mb = megabyte(site);
    both(mb.kind, `${key}=${mb.label}`, set('a'.repeat(ONE_MB)));
    for (const [label, value] of EXTREME_NUMBERS)
      both('number', `${key}=${label}`, set(String(value)));
    both('wrong-type', `${key} twice`, [...set(text), [key, text]]);
    both('wrong-type', `${key}[fuzz]`, [...set(text), [`${key}[fuzz]`, '1']]);
    if (site.node.schema.enum) both('enum', `${key}=ALL`, set('ALL'));
    for (const depth of DEEP)
      both(`deep${depth}`, `${key} nested ${depth} deep`, [
        ...rest,
        [`${key}${'[a]'.repeat(depth)}`, '1'],
      ]);
    if (isIdSite(site))
      for (const f of ctx.foreign) both('foreign', `${key}=${f.label}`, set(f.id));
  }
  both('unknown', 'unknown field', [...base, ['__fuzz_unknown', '1']]);
  const push = (
    kind: string,
    label: string,
    payload: string | Buffer,
    contentType: string | undefined,
    expect: Expectation,
  ) =>
    cases.push({
      group: 'body',
      kind,
      label,
      expect,
      url,
      payload,
      ...(contentType ? { contentType } : {}),
    });
  push('malformed', 'multipart without boundary', multipart(base), 'multipart/form-data', 'reject');
  push(
    'malformed',
    'truncated multipart',
    multipart(base).subarray(0, Math.max(10, multipart(base).length - 30)),
    `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`,
    'reject',
  );
  push(
    'malformed',
    'form empty',
    '',
    'application/x-www-form-urlencoded',
    expectation('empty', validate?.({})),
  );
  push(
    'too-large',
    'form 2 MiB field',
    urlencoded([...base, ['__fuzz_pad', 'a'.repeat(2 * 1024 * 1024)]]),
    'application/x-www-form-urlencoded',
    'reject',
  );
  const fresh = () => formEntriesOf(sample(root, ctx.referenceOf));
  const json = JSON.stringify(Object.fromEntries(fresh()));
  push('content-type', 'form as JSON', json, 'application/json', 'reject');
  push('content-type', 'form as text/plain', urlencoded(fresh()), 'text/plain', 'reject');
  push('content-type', 'form as application/xml', urlencoded(fresh()), 'application/xml', 'reject');
  push('content-type', 'form without content type', urlencoded(fresh()), undefined, 'reject');
  return cases;
}

/** Stray query parameters, and bodies sent to operations that take none. */
function requestCases(b: Builder): FuzzCase[] {
  const { op } = b.ctx;
  const cases: FuzzCase[] = [];
  // Parameters the operation does not declare are refused only when it declares a query schema.
  const strayExpect: Expectation = op.query ? 'reject' : 'survive';
  const stray = (kind: string, label: string, rawQuery: string) =>
    cases.push({
      group: 'request',
      kind,
      label: `query ${label}`,
      expect: strayExpect,
      url: b.url(undefined, b.baseQuery, rawQuery),
      ...b.body,
    });
  stray('stray-nul', 'stray NUL parameter', '__fuzz=%00');
  stray(
    'stray-proto',
    'stray prototype keys',
    '__proto__[polluted]=1&constructor[prototype][polluted]=1',
  );
  stray('stray-escape', 'stray malformed escape', '__fuzz=%E0%A4%A');
  if (op.body === 'none' && op.method !== 'GET') {
    const url = b.url();
    cases.push({
      group: 'request',
      kind: 'stray-json',
      label: 'malformed JSON body',
      expect: 'survive',
      url,
      payload: '{"fuzz":',
      contentType: 'application/json',
    });
    cases.push({
      group: 'request',
      kind: 'stray-xml',
      label: 'XML body',
      expect: 'survive',
      url,
      payload: '<fuzz/>',
      contentType: 'application/xml',
    });
  }
  return cases;
}

/** The body of the valid request: the minimal valid sample of the request schema. */
function validBody(ctx: CaseContext): Pick<FuzzCase, 'payload' | 'contentType'> {
  const { op } = ctx;
  if (op.body === 'none') return {};
  const base = op.request ? sample(schemaOfType(op.request), ctx.referenceOf) : {};
  return op.body === 'form'
    ? { payload: urlencoded(formEntriesOf(base)), contentType: 'application/x-www-form-urlencoded' }
    : { payload: JSON.stringify(base), contentType: 'application/json' };
}

export interface OperationCases {
  /** every hostile case of the operation */
  hostile: FuzzCase[];
  /** the valid request: refused for anonymous callers and for another user's objects */
  valid: FuzzCase;
}

export function casesFor(ctx: CaseContext): OperationCases {
  const b = builder(ctx);
  const { op } = ctx;
  const body =
    op.request && op.body === 'json'
      ? jsonBodyCases(b, op.request)
      : op.request && op.body === 'form'
        ? formBodyCases(b, op.request)
        : [];
  return {
    hostile: [...pathCases(b), ...queryCases(b), ...body, ...requestCases(b)],
    valid: {
      group: 'valid',
      kind: 'valid',
      label: 'valid request',
      expect: 'reject',
      url: b.url(),
      ...b.body,
    },
  };
}

/**
 * A deterministic sample: the first case of every (group, kind) pair, plus every `every`-th
 * case; with `keepGroups`, every case of those groups.
 */
export function sampled(
  cases: readonly FuzzCase[],
  every: number,
  keepGroups: readonly CaseGroup[] = [],
): FuzzCase[] {
  const seen = new Set<string>();
  return cases.filter((c, i) => {
    const key = `${c.group}/${c.kind}`;
    const first = !seen.has(key);
    seen.add(key);
    return first || i % every === 0 || keepGroups.includes(c.group);
  });
}
