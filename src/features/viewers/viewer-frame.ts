import type { CSSProperties } from 'react';

/**
 * The frame of a browser console (VNC, RDP): the whole window above the app, a toolbar row over a
 * dark screen area that takes the rest.
 */
export const VIEWER_FRAME_STYLE: CSSProperties = {
  position: 'fixed',
  inset: 0,
  zIndex: 300,
  display: 'flex',
  flexDirection: 'column',
  background: '#111',
};
