/**
 * Days and times of day as the portal writes them (YYYY-MM-DD, 24-hour HH:mm), without the date
 * library: the login form's messages use them before the application loads. `dates.ts` re-exports
 * them with the rest of the formatting.
 */
const pad = (value: number): string => String(value).padStart(2, '0');

/** A local day as YYYY-MM-DD. */
export function formatDay(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** A local time of day as 24-hour HH:mm. */
export function formatTime(date: Date): string {
  return `${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** Local time of day with seconds, HH:mm:ss. */
export function formatTimeWithSeconds(date: Date): string {
  return `${formatTime(date)}:${pad(date.getSeconds())}`;
}
