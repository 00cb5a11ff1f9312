/** Saves text the server sent as a file (`{content, mime, name, ext}`) through a Blob object URL. */
import type { FileDownload } from '@/generated/types';

/** True when a value has the shape of a file download. */
export function isFileDownload(value: unknown): value is FileDownload {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return ['content', 'mime', 'name', 'ext'].every((key) => typeof v[key] === 'string');
}

/** Saves the file as `<name>.<ext>` (the object URL is revoked after the click). */
export function saveFile(file: FileDownload): void {
  const url = URL.createObjectURL(new Blob([file.content], { type: file.mime }));
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = `${file.name}.${file.ext}`;
  anchor.rel = 'noopener';
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
