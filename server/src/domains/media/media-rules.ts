/**
 * The rules of media that need no database: a medium in a desktop's ISO and floppy lists, the
 * statuses the media state machine allows an action in, and what a refused URL answers.
 */
import { ApiError } from '../../platform/http/api-error.ts';
import { stateActions } from '../../../../src/generated/actions.ts';
import * as validators from '../../../../src/generated/validators.js';
import type {
  DesktopGuestProperties,
  DesktopHardware,
  DesktopMediaRef,
  MediaStatus,
} from '../../../../src/generated/types.ts';
import { MediaUrlError } from '../../platform/lib/safe-fetch.ts';
import { desktopStates, mediaStatuses } from '../../../../src/generated/policy.ts';

type MediaList = 'isos' | 'floppies';

/** The hardware without the medium in its ISO and floppy lists. */
export function withoutMedia(hardware: DesktopHardware, id: string): DesktopHardware {
  const out = structuredClone(hardware);
  for (const list of ['isos', 'floppies'] as const) {
    const refs = out[list];
    if (!refs) continue;
    for (let i = refs.length - 1; i >= 0; i--) if (refs[i]?.id === id) refs.splice(i, 1);
  }
  return out;
}

/** The list fits the hardware's ISO list (the schema's bound, checked by its validator). */
const isIsoList = (refs: DesktopMediaRef[]): refs is NonNullable<DesktopHardware['isos']> =>
  validators.DesktopHardware({ isos: refs });
const isFloppyList = (refs: DesktopMediaRef[]): refs is NonNullable<DesktopHardware['floppies']> =>
  validators.DesktopHardware({ floppies: refs });

/**
 * The hardware with the medium first in `list` (and nowhere else in it); 400 when the list would
 * hold more media than a desktop takes.
 */
export function withMediaFirst(
  hardware: DesktopHardware,
  list: MediaList,
  id: string,
): DesktopHardware {
  const out = withoutMedia(hardware, id);
  const refs = [{ id }, ...(out[list] ?? [])];
  if (list === 'isos' && isIsoList(refs)) out.isos = refs;
  else if (list === 'floppies' && isFloppyList(refs)) out.floppies = refs;
  else
    throw new ApiError(
      'bad_request',
      `A desktop takes no more ${list}`,
      'bad_request',
      { id },
      { errors: { [`/hardware/${list}`]: 'maxItems' } },
    );
  return out;
}

/** How often a running download stores and pushes its progress. */
export const PROGRESS_MS = 500;
/** How long a delete waits for the desktops it stops. */
export const STOP_WAIT_MS = 30_000;

/** States whose download is running or about to (settled at boot: nothing runs then). */
export const DOWNLOADING: readonly MediaStatus[] = mediaStatuses.downloading;

/** Desktop states in which a VM may hold the medium open. */
export const VM_STATES: readonly string[] = desktopStates.maybeRunning;

/** A new desktop's viewers and credentials when the body sends none. */
export const NEW_DESKTOP_GUEST: DesktopGuestProperties = {
  fullscreen: false,
  credentials: { username: 'isard', password: 'pirineus' },
  viewers: { browser_vnc: { options: null }, file_spice: { options: null } },
};

export const NOBODY = { roles: false, categories: false, groups: false, users: false } as const;

export type MediaRule = keyof typeof stateActions.media.rules;

/** The statuses a rule of the media state machine (x-actions) allows. */
export const ruleStates = (rule: MediaRule): MediaStatus[] => [
  ...stateActions.media.rules[rule].states,
];

/** Throws the rule's code (428) when `status` does not allow it. */
export function assertMediaRule(rule: MediaRule, status: string): void {
  const def = stateActions.media.rules[rule];
  if (!ruleStates(rule).some((s) => s === status))
    throw new ApiError(
      'precondition_required',
      `Not allowed while the media is ${status}`,
      def.code,
      { status },
    );
}

/** An API error for a refused URL (the description never names the addresses behind a host). */
export function urlError(err: MediaUrlError): ApiError {
  if (err.code === 'media_url_not_found')
    return new ApiError('not_found', 'The media URL was not found', err.code);
  return new ApiError('bad_request', `The media URL can not be used: ${err.message}`, err.code);
}
