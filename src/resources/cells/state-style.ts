/**
 * How a state looks wherever it is shown (desktops, media, recycle-bin entries...): the schema's
 * `x-ui.states` of each state enum gives a colour and an icon, so the same word has the same look on
 * every screen. States that are no enum value (a template's enabled flag, a booking's phase) have
 * their look here.
 */
import { stateLooks } from '@/generated/policy';

const FLAG_LOOKS: Readonly<Record<string, { color: string; icon: string }>> = {
  enabled: { color: 'green', icon: 'circle-check' },
  active: { color: 'green', icon: 'circle-check' },
  visible: { color: 'green', icon: 'circle-check' },
  disabled: { color: 'gray', icon: 'circle' },
  invisible: { color: 'gray', icon: 'circle' },
};

const lookOf = (state: string) => stateLooks[state] ?? FLAG_LOOKS[state];

/** Mantine colour of a state (blue for the transitional rest: starting, creating, downloading...). */
export function stateColor(state: string): string {
  return lookOf(state)?.color ?? 'blue';
}

/** Icon name of a state. */
export function stateIcon(state: string): string {
  return lookOf(state)?.icon ?? 'loader';
}
