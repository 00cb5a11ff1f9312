/**
 * Viewer endpoint access (generated operation `desktops.viewer`) and what to do with its answer:
 * browser viewers open their page in a new tab (same tab when popups are blocked), file viewers
 * download `<name>.<ext>` through a Blob object URL.
 */
import type { ViewerKey } from '@/generated/types';
import { request } from '@/providers/http-client';

/** Answer of a browser viewer (`browser-vnc`). */
export interface BrowserViewer {
  kind: 'browser';
  protocol: string;
  /** SPA page of the viewer, e.g. `/viewer/vnc/<id>`. */
  viewer: string;
  /** Websocket path with a single-use ticket (60 s). */
  url: string;
  expires: number;
  values: { vmName?: string; password?: string };
}

/** Answer of a file viewer (`file-spice`). */
export interface FileViewer {
  kind: 'file';
  protocol: string;
  name: string;
  ext: string;
  mime: string;
  content: string;
}

export type ViewerAnswer = BrowserViewer | FileViewer;

/** Asks the server for a viewer (a new ticket every call). */
export function fetchViewer(
  id: string,
  viewer: ViewerKey,
  signal?: AbortSignal,
): Promise<ViewerAnswer> {
  return request<ViewerAnswer>('desktops.viewer', {
    params: { id, viewer },
    ...(signal ? { signal } : {}),
  });
}

/** Same-origin websocket URL of a viewer path. */
export function websocketUrl(
  path: string,
  location: Pick<Location, 'protocol' | 'host'> = window.location,
): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;
}

/** Saves a file viewer as `<name>.<ext>` (Blob + object URL, revoked after the click). */
export function downloadViewerFile(file: FileViewer): void {
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

/**
 * Opens a browser viewer page in a new tab; when popups are blocked (window.open returns null),
 * navigates the current tab instead. Returns where it opened.
 */
export function openViewerPage(
  path: string,
  target: Window | null = null,
  navigate: (path: string) => void = (p) => window.location.assign(p),
): 'tab' | 'same' {
  if (target) {
    target.location.href = path;
    return 'tab';
  }
  const opened = window.open(path, '_blank');
  if (opened) {
    opened.opener = null;
    return 'tab';
  }
  navigate(path);
  return 'same';
}

/** Handles a viewer answer: page for browser viewers, download for file viewers. */
export function applyViewerAnswer(
  answer: ViewerAnswer,
  target: Window | null = null,
  navigate?: (path: string) => void,
): 'tab' | 'same' | 'download' {
  if (answer.kind === 'file') {
    target?.close();
    downloadViewerFile(answer);
    return 'download';
  }
  return openViewerPage(answer.viewer, target, navigate);
}
