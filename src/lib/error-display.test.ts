/**
 * Which refusals open the quota popup: exactly the codes of the schema's quota catalogue (every
 * quota and every group or category limit the server refuses with), whatever their names; any
 * other code is a toast.
 */
import { notifications } from '@mantine/notifications';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { quotaCodes } from '@/generated/error-codes';
import { closeQuotaPopup, showError } from './error-display';

const refusal = (code: string) => ({
  statusCode: 428,
  error: 'precondition_required',
  description_code: code,
  params: { limit: 4 },
});

afterEach(() => {
  closeQuotaPopup();
  vi.restoreAllMocks();
});

describe('the quota popup', () => {
  it.each([
    'desktop_start_group_limit_exceeded',
    'desktop_start_category_limit_exceeded',
    'desktop_start_group_memory_limit_exceeded',
    'desktop_start_category_memory_limit_exceeded',
    'desktop_start_group_vcpu_limit_exceeded',
    'desktop_start_category_vcpu_limit_exceeded',
    'desktop_new_group_limit_exceeded',
    'media_new_category_limit_exceeded',
  ])('opens for the limit refusal %s, not a toast', (code) => {
    const toast = vi.spyOn(notifications, 'show').mockReturnValue('id');
    expect(showError(refusal(code))).toBe('quota');
    expect(toast).not.toHaveBeenCalled();
  });

  it('opens for every code of the catalogue', () => {
    vi.spyOn(notifications, 'show').mockReturnValue('id');
    expect(quotaCodes.filter((code) => showError(refusal(code)) !== 'quota')).toEqual([]);
  });

  it('leaves any other refusal to a toast, even one whose name says quota', () => {
    const toast = vi.spyOn(notifications, 'show').mockReturnValue('id');
    expect(showError(refusal('media_downloads_limit'))).toBe('toast');
    expect(showError(refusal('quota_unknown'))).toBe('toast');
    expect(toast).toHaveBeenCalledTimes(2);
  });
});
