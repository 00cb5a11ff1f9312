/**
 * Hostile input stops at the door: path parameters are validated by their generated schemas, NUL
 * characters and lone surrogates anywhere in a request answer 400 before any handler, JSON nested
 * deeper than 32 levels answers 400 without being parsed, and a URL the router cannot decode gets
 * our error body. Each case also proves the target row did not change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type Operation } from '../../../../src/generated/api.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  loginRequest,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';

let t: TestApp;
let token: string;
let desktopId: string;

const ops = Object.values(operations) as Operation[];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  token = await login(t.app, 'user');
  const list = await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user/desktops' });
  desktopId = (list.json() as { id: string }[])[0]?.id ?? '';
  expect(desktopId).not.toBe('');
});
afterAll(async () => t.close());

const urlOf = (op: Operation, value: string) =>
  (op.base === 'auth' ? '/authentication' : '/api/v3') + op.path.replace(/\{\w+\}/g, value);

async function desktopRow(): Promise<unknown> {
  const [row] = await t.app.database.query('SELECT * FROM desktops WHERE id = $1', [desktopId]);
  return row;
}

function putDesktop(payload: string) {
  return injectWithToken(t.app, token, {
    method: 'PUT',
    url: `/api/v3/domain/${desktopId}`,
    headers: { 'content-type': 'application/json' },
    payload,
  });
}

describe('path parameters', () => {
  it('every operation with a path parameter answers a NUL byte in it with 400, never 500', async () => {
    const withParams = ops.filter((op) => op.path.includes('{'));
    expect(withParams.length).toBeGreaterThan(60);
    const wrong: string[] = [];
    for (const op of withParams) {
      const res = await injectWithToken(t.app, token, {
        method: op.method,
        url: urlOf(op, 'a%00b'),
        ...(op.body === 'json' ? { payload: {} } : {}),
      });
      // 401/403 when the caller may not use the operation at all (checked before the input).
      if (![400, 401, 403].includes(res.statusCode) || res.statusCode >= 500)
        wrong.push(`${op.key} ${op.method} ${op.path} -> ${res.statusCode}`);
      else expectErrorShape(res.json(), res.statusCode === 400 ? 'bad_request' : res.json().error);
    }
    expect(wrong).toEqual([]);
  });

  it('the public GET /category/{id} refuses a NUL byte with 400', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v3/category/def%00ault' });
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 'bad_request');
  });

  it('GET /user/templates/allowed/{kind} accepts only all and shared', async () => {
    for (const kind of ['bogus', '.*', 'ALL']) {
      const res = await injectWithToken(t.app, token, {
        method: 'GET',
        url: `/api/v3/user/templates/allowed/${encodeURIComponent(kind)}`,
      });
      expect(res.statusCode, kind).toBe(400);
      expectErrorShape(res.json(), 'bad_request');
    }
    const ok = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/user/templates/allowed/all',
    });
    expect(ok.statusCode).toBe(200);
  });

  it('a card image name that could leave its directory answers 400', async () => {
    for (const file of ['..%2F..%2Fetc%2Fpasswd', 'a%00.png', 'x.png%2F..']) {
      const res = await injectWithToken(t.app, token, {
        method: 'GET',
        url: `/api/v3/images/desktops/user/${file}`,
      });
      expect(res.statusCode, file).toBe(400);
    }
  });

  it('a URL the router cannot decode gets our error body, not the framework one', async () => {
    const res = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/domain/info/%E0%A4%A',
    });
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 'bad_request');
    expect(res.body).not.toContain('FST_');
  });
});

describe('bodies, queries and forms', () => {
  it('a NUL or a lone surrogate in any body string or key answers 400 and stores nothing', async () => {
    const before = await desktopRow();
    const cases: Record<string, string> = {
      'NUL in description': '{"description":"a\\u0000b"}',
      'lone high surrogate': '{"description":"a\\ud800b"}',
      'lone low surrogate': '{"description":"\\udc00"}',
      'NUL in credentials.username': '{"guest_properties":{"credentials":{"username":"u\\u0000"}}}',
      'NUL in an ISO id': '{"hardware":{"isos":[{"id":"iso\\u0000"}]}}',
      'NUL in an object key': '{"description":"ok","x\\u0000":1}',
    };
    for (const [name, payload] of Object.entries(cases)) {
      const res = await putDesktop(payload);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().description_code, name).toBe('invalid_characters');
    }
    expect(await desktopRow()).toEqual(before);
    // A valid pair of surrogates (an emoji) is text like any other.
    const emoji = await putDesktop('{"description":"\\ud83d\\ude00"}');
    expect(emoji.statusCode).toBeLessThan(500);
    if (emoji.statusCode === 400)
      expect(emoji.json().description_code).not.toBe('invalid_characters');
  });

  it('a lone surrogate or a NUL in an object key answers 400 invalid_characters in our error shape, never 500', async () => {
    const before = await desktopRow();
    const keys = ['\\ud800', '\\udfff', 'a\\udbff', '\\u0000', 'a/b~\\ud800'];
    for (const key of keys) {
      for (const [method, url] of [
        ['POST', '/api/v3/persistent_desktop'],
        ['PUT', `/api/v3/domain/${desktopId}`],
      ] as const) {
        const res = await injectWithToken(t.app, token, {
          method,
          url,
          headers: { 'content-type': 'application/json' },
          payload: `{"name":"k","options":{"${key}":"\\udfff"}}`,
        });
        expect(res.statusCode, `${method} ${url} ${key}`).toBe(400);
        expectErrorShape(res.json(), 'bad_request');
        expect(res.json().description_code).toBe('invalid_characters');
        expect(res.json().params.path).toMatch(/^\/options\//);
      }
    }
    expect(await desktopRow()).toEqual(before);
  });

  it('JSON nested deeper than 32 levels answers 400 without parsing it, at any depth', async () => {
    const before = await desktopRow();
    for (const depth of [33, 40, 20_000, 200_000]) {
      const res = await putDesktop(`{"description":${'['.repeat(depth)}${']'.repeat(depth)}}`);
      expect(res.statusCode, String(depth)).toBe(400);
      expect(res.json().description_code, String(depth)).toBe('body_too_deep');
    }
    // Brackets inside strings are text, not nesting.
    const text = await putDesktop(JSON.stringify({ description: '['.repeat(100) }));
    expect(text.json().description_code).not.toBe('body_too_deep');
    expect(await desktopRow()).toEqual(before);
  });

  it('prototype keys and malformed JSON answer 400 with our error body', async () => {
    for (const payload of ['{"__proto__":{"admin":true}}', '{"description":', '', '[1,]']) {
      const res = await putDesktop(payload);
      expect(res.statusCode, payload).toBe(400);
      expectErrorShape(res.json(), 'bad_request');
    }
  });

  it('a NUL in a form field or a query value answers 400, never 500', async () => {
    const form = await loginRequest(t.app, 'us\u0000er');
    expect(form.statusCode).toBe(400);
    expect(form.json().description_code).toBe('invalid_characters');
    const query = await t.app.inject({
      method: 'POST',
      url: '/authentication/login?provider=form&category_id=def%00ault',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'username=user&password=x',
    });
    expect(query.statusCode).toBe(400);
    expectErrorShape(query.json(), 'bad_request');
  });
});
