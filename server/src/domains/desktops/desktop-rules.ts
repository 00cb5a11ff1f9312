/**
 * Desktop rules that span fields (viewers and networks, GPU-only video), plus the state guards of
 * the desktops' state machine (`x-actions` of schema/entities/desktop.schema.json, through the
 * functions the SPA uses too).
 */
import { stateActions } from '../../../../src/generated/actions.ts';
import type { DesktopHardware } from '../../../../src/generated/types.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { offeredActions } from '../../../../common/state-actions.ts';
import { guestKey, NEEDS_WIREGUARD, WIREGUARD_INTERFACE } from '../../../../common/viewers.ts';

type RuleName = keyof typeof stateActions.desktops.rules;

/** Throws the rule's code (e.g. 428 desktop_not_stopped) when `state` does not allow `rule`. */
export function assertStateAllows(rule: RuleName, state: string): void {
  const def = stateActions.desktops.rules[rule] as {
    states: readonly string[];
    code: string;
    status?: number;
  };
  if (!def.states.includes(state)) {
    throw new ApiError(
      def.status === 409 ? 'conflict' : 'precondition_required',
      `Not allowed while the desktop is ${state}`,
      def.code,
      { state },
      def.status ? { status: def.status } : {},
    );
  }
}

type ActionName = keyof typeof stateActions.desktops.actions;

/** Throws 428 `unable_to_<verb>_desktop_from` unless one of `accepted` is offered in the desktop's state. */
export function assertActionOffered(
  desktop: { state: string; type?: string },
  accepted: readonly ActionName[],
  verb: string,
): void {
  const offered = offeredActions('desktops', desktop);
  if (!accepted.some((a) => offered.includes(a))) {
    throw new ApiError(
      'precondition_required',
      `Can not ${verb} a desktop that is ${desktop.state}`,
      `unable_to_${verb}_desktop_from`,
      { state: desktop.state },
    );
  }
}

/** guest_properties.viewers keys of the viewers that need the wireguard network. */
const WIREGUARD_VIEWER_KEYS: readonly string[] = NEEDS_WIREGUARD.map(guestKey);

export interface ViewerCheckInput {
  viewers?: Record<string, unknown> | undefined;
  interfaces?: readonly string[] | undefined;
  videos?: readonly string[] | undefined;
}

/**
 * check_viewers: RDP-family viewers need the wireguard interface, GPU-only
 * video (`none`) works with RDP viewers only. (At least one viewer is a schema rule: minProperties.)
 */
export function checkViewers({ viewers, interfaces, videos }: ViewerCheckInput): void {
  if (!viewers) return;
  const keys = Object.keys(viewers);
  const rdp = keys.filter((k) => WIREGUARD_VIEWER_KEYS.includes(k));
  if (rdp.length > 0 && !(interfaces ?? []).includes(WIREGUARD_INTERFACE))
    throw new ApiError(
      'bad_request',
      'RDP viewers need the wireguard network',
      'viewer_needs_wireguard',
      { viewers: rdp },
      { errors: { '/guest_properties/viewers': 'viewer_needs_wireguard' } },
    );
  if ((videos ?? []).includes('none') && (rdp.length === 0 || keys.some((k) => !rdp.includes(k))))
    throw new ApiError(
      'bad_request',
      'GPU-only video works with RDP viewers only',
      'only_works_rdp',
      null,
      { errors: { '/hardware/videos': 'only_works_rdp' } },
    );
}

/** The GPU profiles a desktop's hardware names ("None" is the absence of one). */
export const profilesOf = (hardware: DesktopHardware | undefined): string[] =>
  (hardware?.reservables?.vgpus ?? []).filter((v) => v !== 'None');
