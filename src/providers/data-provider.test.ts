import { describe, expect, it, vi } from 'vitest';
import { createDataProvider, type RequestFn } from './data-provider';

describe('data provider', () => {
  it('reads a record by id, and a singleton without one', async () => {
    const request = vi.fn<RequestFn>(async () => ({ id: 'x' }));
    const provider = createDataProvider(request);
    await provider.getOne({ resource: 'deployments', id: 'p1' });
    await provider.getOne({ resource: 'profile', id: 'u1' });
    expect(request.mock.calls).toEqual([
      ['deployments.show', { params: { id: 'p1' } }],
      ['profile.show', { params: {} }],
    ]);
  });
});
