import { describe, expect, it } from 'vitest';
import { testI18n } from '../form/test-utils';
import { operationText } from './operation-cell';

describe('operationText', () => {
  it('names an operation key by its resource and action, not the raw key', () => {
    expect(operationText(testI18n.t, 'adminUsers.update')).toBe('Users · Update');
    expect(operationText(testI18n.t, 'adminUsers.setPassword')).toBe('Users · Set password');
  });

  it('keeps a key it cannot name', () => {
    expect(operationText(testI18n.t, 'cli')).toBe('cli');
    expect(operationText(testI18n.t, 'nothing.here')).toBe('nothing.here');
  });
});
