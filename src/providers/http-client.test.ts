import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  configureHttpClient,
  ensureFreshToken,
  onOperationSuccess,
  request,
  SESSION_NOT_RENEWABLE,
  type HttpHooks,
} from './http-client';
import { SESSION_COOKIE, clearToken, getToken, setToken } from '@/lib/token';

function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

describe('http-client', () => {
  let previous: HttpHooks;
  const hooks = {
    onUnauthorized: vi.fn(),
    onServerError: vi.fn(),
    onMaintenance: vi.fn(),
    onRenewFailed: vi.fn(),
    onTokenRenewed: vi.fn(),
  };
  const fetchMock = vi.fn<typeof fetch>();

  beforeEach(() => {
    previous = configureHttpClient(hooks);
    vi.stubGlobal('fetch', fetchMock);
    setToken(
      jwt({
        kid: 'isardvdi',
        exp: Math.floor(Date.now() / 1000) + 3600,
        data: { role_id: 'user' },
      }),
    );
  });
  afterEach(() => {
    configureHttpClient(previous);
    vi.unstubAllGlobals();
    fetchMock.mockReset();
    for (const hook of Object.values(hooks)) hook.mockReset();
    clearToken();
  });

  it('converts an error body into an HttpError keeping description_code and params', async () => {
    fetchMock.mockResolvedValueOnce(
      json(409, {
        error: 'conflict',
        msg: 'x',
        description: 'Viewer not started',
        description_code: 'viewer_not_started',
        params: { a: 1 },
        errors: { name: 'dup' },
      }),
    );
    const error = (await request('desktops.list').catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.statusCode).toBe(409);
    expect(error.message).toBe('Viewer not started');
    expect(error.description_code).toBe('viewer_not_started');
    expect(error.params).toEqual({ a: 1 });
    expect(error.errors).toEqual({ name: 'dup' });
  });

  it('converts a network failure into an HttpError with status 0', async () => {
    fetchMock.mockRejectedValueOnce(new TypeError('Failed to fetch'));
    const error = (await request('desktops.list').catch((e: unknown) => e)) as ApiError;
    expect(error.statusCode).toBe(0);
    expect(error.error).toBe('network_error');
  });

  it('logs out on 401, goes to the error page on 500 and to maintenance on 503', async () => {
    fetchMock.mockResolvedValueOnce(json(401, { error: 'unauthorized' }));
    await expect(request('desktops.list')).rejects.toMatchObject({ statusCode: 401 });
    expect(hooks.onUnauthorized).toHaveBeenCalledTimes(1);
    fetchMock.mockResolvedValueOnce(json(500, { error: 'internal_server' }));
    await expect(request('desktops.list')).rejects.toMatchObject({ statusCode: 500 });
    expect(hooks.onServerError).toHaveBeenCalledTimes(1);
    fetchMock.mockResolvedValueOnce(json(503, { error: 'service_unavailable' }));
    await expect(request('desktops.list')).rejects.toMatchObject({ statusCode: 503 });
    expect(hooks.onMaintenance).toHaveBeenCalledTimes(1);
  });

  it('resolves 429 with null except on login, where it keeps Retry-After', async () => {
    fetchMock.mockResolvedValueOnce(json(429, { error: 'too_many_requests' }));
    await expect(request('desktops.list')).resolves.toBeNull();
    fetchMock.mockResolvedValueOnce(
      new Response('Retry after', {
        status: 429,
        headers: { 'Retry-After': 'Sat, 21 Nov 2026 10:00:00 GMT' },
      }),
    );
    const error = (await request('session.login', {
      query: { provider: 'form', category_id: 'default' },
      body: {},
    }).catch((e: unknown) => e)) as ApiError;
    expect(error.statusCode).toBe(429);
    expect(error.retryAfter).toBe('Sat, 21 Nov 2026 10:00:00 GMT');
  });

  it('rejects a 429 of the second-factor step: the lockout is shown, not dropped', async () => {
    fetchMock.mockResolvedValueOnce(
      json(429, { error: 'too_many_requests', description_code: 'too_many_requests' }),
    );
    const error = (await request('session.verifySecondFactor', {
      body: { one_time_code: '000000' },
    }).catch((e: unknown) => e)) as ApiError;
    expect(error.statusCode).toBe(429);
  });

  it('does not log out on a login 401 (wrong credentials)', async () => {
    fetchMock.mockResolvedValueOnce(json(401, { error: 'invalid_credentials' }));
    await expect(
      request('session.login', { body: { username: 'u', password: 'p' } }),
    ).rejects.toMatchObject({ statusCode: 401 });
    expect(hooks.onUnauthorized).not.toHaveBeenCalled();
  });

  it('sends the bearer token and fills path parameters from the generated operation', async () => {
    fetchMock.mockResolvedValueOnce(json(200, { status: 'ok' }));
    await request('desktops.action', { params: { action: 'start', id: 'd1' } });
    const [url, init] = fetchMock.mock.calls[0] ?? [];
    expect(url).toBe('/api/v3/desktop/start/d1');
    expect((init?.headers as Record<string, string>).Authorization).toBe(`Bearer ${getToken()}`);
  });

  it('tells its listeners which calls succeeded, with their path parameters', async () => {
    const seen: [string, unknown][] = [];
    const stop = onOperationSuccess((key, params) => seen.push([key, params]));
    fetchMock.mockResolvedValueOnce(json(200, {}));
    await request('desktops.action', { params: { id: 'd1', action: 'start' } });
    fetchMock.mockResolvedValueOnce(json(409, { error: 'conflict' }));
    await expect(
      request('desktops.action', { params: { id: 'd2', action: 'start' } }),
    ).rejects.toThrow();
    stop();
    fetchMock.mockResolvedValueOnce(json(200, {}));
    await request('desktops.action', { params: { id: 'd3', action: 'start' } });
    expect(seen).toEqual([['desktops.action', { id: 'd1', action: 'start' }]]);
  });

  it('renews a token within 30 s of exp before the request', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: Math.floor(Date.now() / 1000) + 10 }));
    const fresh = jwt({ kid: 'isardvdi', exp: Math.floor(Date.now() / 1000) + 300 });
    fetchMock
      .mockResolvedValueOnce(json(200, { token: fresh }))
      .mockResolvedValueOnce(json(200, []));
    await request('desktops.list');
    expect(fetchMock.mock.calls[0]?.[0]).toBe('/authentication/renew');
    expect((fetchMock.mock.calls[1]?.[1]?.headers as Record<string, string>).Authorization).toBe(
      `Bearer ${fresh}`,
    );
    expect(document.cookie).toContain(SESSION_COOKIE);
    expect(getToken()).toBe(fresh);
  });

  it("sends a request with a token far from exp in the caller's task, before anything after the call", async () => {
    fetchMock.mockResolvedValueOnce(json(200, { status: 'starting' }));
    const answer = request('desktops.action', { params: { id: 'd1', action: 'start' } });
    // No await yet: a click that opens a window after the call has its request already sent.
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(fetchMock.mock.calls[0]?.[0]).toContain('/desktop/start/d1');
    await answer;
  });

  it('does not renew a token far from exp', async () => {
    const token = await ensureFreshToken();
    expect(token).toBe(getToken());
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it("rejects with 'Session cannot be renewed' and opens the expired modal when renewal fails", async () => {
    setToken(jwt({ kid: 'isardvdi', exp: Math.floor(Date.now() / 1000) - 5 }));
    fetchMock.mockResolvedValueOnce(json(401, { error: 'invalid_session' }));
    await expect(request('desktops.list')).rejects.toMatchObject({
      message: SESSION_NOT_RENEWABLE,
    });
    expect(hooks.onRenewFailed).toHaveBeenCalledTimes(1);
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });
});
