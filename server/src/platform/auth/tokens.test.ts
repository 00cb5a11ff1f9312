/**
 * Token verification remembers a verified token only while it is valid: a token seen again is not
 * verified again before its exp plus the leeway, and is refused as expired after it; a token that
 * did not verify is never remembered; the remembered payload is read-only.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenService } from './tokens.ts';

const key = new TextEncoder().encode('a-test-signing-key-of-enough-length-for-hs256');
const LEEWAY = 60;

async function loginToken(tokens: TokenService, expInSeconds: number): Promise<string> {
  return tokens.signLogin({
    sessionId: '00000000-0000-4000-8000-000000000001',
    userId: 'u1',
    exp: Math.floor(Date.now() / 1000) + expInSeconds,
    data: {
      provider: 'form',
      user_id: 'u1',
      role_id: 'user',
      category_id: 'default',
      group_id: 'default-default',
      name: 'User',
    },
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('TokenService.verify', () => {
  it('answers a token seen again with the same read-only payload', async () => {
    const tokens = new TokenService(key, LEEWAY);
    const token = await loginToken(tokens, 600);
    const first = await tokens.verify(token);
    const again = await tokens.verify(token);
    expect(again).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.data)).toBe(true);
  });

  it('refuses a remembered token once its exp plus the leeway has passed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const tokens = new TokenService(key, LEEWAY);
    const token = await loginToken(tokens, 10);
    await expect(tokens.verify(token)).resolves.toMatchObject({ sub: 'u1' });
    vi.setSystemTime(Date.now() + (10 + LEEWAY - 2) * 1000);
    await expect(tokens.verify(token)).resolves.toMatchObject({ sub: 'u1' });
    vi.setSystemTime(Date.now() + 5 * 1000);
    await expect(tokens.verify(token)).rejects.toMatchObject({ descriptionCode: 'token_expired' });
    // renew still reads an expired token whose signature verifies
    await expect(tokens.verify(token, { allowExpired: true })).resolves.toMatchObject({
      sub: 'u1',
    });
  });

  it('never remembers a token that did not verify', async () => {
    const tokens = new TokenService(key, LEEWAY);
    const other = new TokenService(
      new TextEncoder().encode('another-key-another-key-another-key'),
      60,
    );
    const forged = await loginToken(other, 600);
    await expect(tokens.verify(forged)).rejects.toMatchObject({ descriptionCode: 'invalid_token' });
    await expect(tokens.verify(forged)).rejects.toMatchObject({ descriptionCode: 'invalid_token' });
    const tampered = (await loginToken(tokens, 600)).slice(0, -2) + 'xx';
    await expect(tokens.verify(tampered)).rejects.toMatchObject({
      descriptionCode: 'invalid_token',
    });
  });
});
