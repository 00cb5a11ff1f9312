import { afterEach, describe, expect, it, vi } from 'vitest';
import { notifications } from '@mantine/notifications';
import { formatDate } from '@/lib/dates';
import { testI18n } from '@/resources/form/test-utils';
import { MESSAGE_TOAST_MS, messageColor, messageText, showMessageToast } from './message-toast';

afterEach(() => vi.restoreAllMocks());

describe('msg toasts', () => {
  const message = {
    type: 'warning',
    msg_code: 'desktop-time-limit',
    params: { name: 'Ubuntu', date: '2026-11-23T10:00+0000', time_remaining: 600 },
  };

  it('interpolates the params and shows the date in local time', () => {
    const text = messageText(message, testI18n);
    expect(text).toBe(`Desktop “Ubuntu” will be shut down at ${formatDate(message.params.date)}.`);
    expect(text).toMatch(/ \d{4}-\d{2}-\d{2} \d{2}:\d{2}\.$/);
    expect(text).not.toContain('+0000');
  });

  it('names an unknown code instead of showing a raw key', () => {
    expect(messageText({ type: '', msg_code: 'brand-new-code', params: null }, testI18n)).toBe(
      'Message from the server: brand-new-code',
    );
  });

  it('colours by type and stays for the notification toast time', () => {
    expect(messageColor('info')).toBe('blue');
    expect(messageColor('danger')).toBe('red');
    expect(messageColor('')).toBe('gray');
    const show = vi.spyOn(notifications, 'show').mockReturnValue('id');
    showMessageToast(message);
    expect(MESSAGE_TOAST_MS).toBe(5000);
    expect(show).toHaveBeenCalledWith(
      expect.objectContaining({ color: 'orange', autoClose: MESSAGE_TOAST_MS }),
    );
  });
});
