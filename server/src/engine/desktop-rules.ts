/**
 * Desktop rules of spec section 4 that span fields, plus the state guards read from the generated
 * state-action table (`x-actions.rules` of schema/entities/desktop.schema.json).
 */
import { stateActions } from '../../../src/generated/actions.ts';
import { ApiError } from '../lib/api-error.ts';

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

/** Actions the state-action table offers for a desktop (its state's row, or a matching override). */
export function actionsFor(desktop: { state: string; type?: string }): ActionName[] {
  const table = stateActions.desktops.table as Record<string, readonly ActionName[]>;
  let offered: readonly ActionName[] = table[desktop.state] ?? [];
  // A matching override replaces the state's row (a started temporary desktop offers delete instead of stop).
  for (const o of stateActions.desktops.overrides as readonly {
    when: Record<string, unknown>;
    states: readonly string[];
    actions: readonly ActionName[];
  }[]) {
    const applies =
      o.states.includes(desktop.state) &&
      Object.entries(o.when).every(([k, v]) => (desktop as Record<string, unknown>)[k] === v);
    if (applies) offered = o.actions;
  }
  return [...offered];
}

/** Throws 428 `unable_to_<verb>_desktop_from` unless one of `accepted` is offered in the desktop's state. */
export function assertActionOffered(
  desktop: { state: string; type?: string },
  accepted: readonly ActionName[],
  verb: string,
): void {
  const offered = actionsFor(desktop);
  if (!accepted.some((a) => offered.includes(a))) {
    throw new ApiError(
      'precondition_required',
      `Can not ${verb} a desktop that is ${desktop.state}`,
      `unable_to_${verb}_desktop_from`,
      { state: desktop.state },
    );
  }
}

/** Viewers that need the wireguard network (spec section 4 rules). */
export const WIREGUARD_VIEWERS = ['browser_rdp', 'file_rdpgw', 'file_rdpvpn'] as const;

export interface ViewerCheckInput {
  viewers?: Record<string, unknown> | undefined;
  interfaces?: readonly string[] | undefined;
  videos?: readonly string[] | undefined;
}

/**
 * check_viewers (reference 3.4 step 5): RDP-family viewers need the wireguard interface, GPU-only
 * video (`none`) works with RDP viewers only. (At least one viewer is a schema rule: minProperties.)
 */
export function checkViewers({ viewers, interfaces, videos }: ViewerCheckInput): void {
  if (!viewers) return;
  const keys = Object.keys(viewers);
  const rdp = keys.filter((k) => (WIREGUARD_VIEWERS as readonly string[]).includes(k));
  if (rdp.length > 0 && !(interfaces ?? []).includes('wireguard'))
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

/**
 * Spec 3: the stock card of a desktop is id-derived modulo 48 plus 1 (reference 3.15). The SPA
 * draws stock cards itself (a gradient per index), so no URL is sent.
 */
export function stockImageOf(id: string): { id: string; type: 'stock'; url: string } {
  let t = 0;
  for (const c of id) t = (2 * t + c.charCodeAt(0)) % 2 ** 31;
  return { id: String((t % 48) + 1), type: 'stock', url: '' };
}
