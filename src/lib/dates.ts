/** Display formats of the desktops screen (local YYYY-MM-DD HH:mm, spec section 9). */
import dayjs from 'dayjs';

export const DATE_FORMAT = 'YYYY-MM-DD HH:mm';

/** Formats epoch seconds or a wire date; empty for missing values. */
export function formatDate(value: number | string | false | null | undefined): string {
  if (value === undefined || value === null || value === false || value === '') return '';
  const date = typeof value === 'number' ? dayjs.unix(value) : dayjs(value);
  return date.isValid() ? date.format(DATE_FORMAT) : '';
}
