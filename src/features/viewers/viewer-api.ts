/**
 * Viewer endpoint access (generated operation `desktops.viewer`) and what to do with its answer:
 * browser viewers open their page in a new tab (same tab when popups are blocked), file viewers
 * download `<name>.<ext>` through a Blob object URL.
 */
import type {
  DesktopBrowserViewer,
  DesktopViewerAnswer,
  FileDownload,
  ViewerKey,
} from '@/generated/types';
import { resourceOf } from '@/generated/resources';
import { saveFile } from '@/lib/download';
import { writeRdpCookie } from './rdp-cookie';
import { request } from '@/providers/http-client';

export type BrowserViewer = DesktopBrowserViewer;
export type FileViewer = FileDownload;
export type ViewerAnswer = DesktopViewerAnswer;

/** True for a browser viewer answer (a page and a console ticket), false for a file. */
export function isBrowserViewer(answer: ViewerAnswer): answer is BrowserViewer {
  return answer.kind === 'browser' && 'viewer' in answer;
}

/** Asks the server for a viewer (a new ticket every call). */
export async function fetchViewer(
  id: string,
  viewer: ViewerKey,
  signal?: AbortSignal,
): Promise<ViewerAnswer> {
  const answer = await request('desktops.viewer', {
    params: { id, viewer },
    ...(signal ? { signal } : {}),
  });
  if (!answer) throw new Error('The viewer call was throttled; try again');
  return answer;
}

/** The SPA route of the browser VNC viewer page, from the desktops resource. */
const VNC_PAGE = resourceOf('desktops')?.meta.extraRoutes.viewer ?? null;

/**
 * The page of a viewer that asks for its own ticket (browser VNC), or null: the other viewers
 * need the viewer answer first.
 */
export function viewerPagePath(id: string, viewer: ViewerKey): string | null {
  return viewer === 'browser-vnc' && VNC_PAGE ? VNC_PAGE.replace(':id', id) : null;
}

export { websocketUrl } from './console-channel';

/** Saves a file viewer as `<name>.<ext>`. */
export function downloadViewerFile(file: FileViewer): void {
  saveFile(file);
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

/**
 * Handles a viewer answer: page for browser viewers, download for file viewers. The RDP page
 * learns which desktop it is for from the viewer cookie written here (`desktopId`).
 */
export function applyViewerAnswer(
  answer: ViewerAnswer,
  target: Window | null = null,
  navigate?: (path: string) => void,
  desktopId?: string,
): 'tab' | 'same' | 'download' {
  if (!isBrowserViewer(answer)) {
    target?.close();
    downloadViewerFile(answer);
    return 'download';
  }
  if (answer.protocol === 'rdp' && desktopId)
    writeRdpCookie(desktopId, answer.values.vmName ?? '', answer.viewer.split('?')[0] ?? '/');
  return openViewerPage(answer.viewer, target, navigate);
}
