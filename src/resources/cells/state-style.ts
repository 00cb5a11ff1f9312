/**
 * How a state looks wherever it is shown (desktops, media, recycle-bin entries...): a colour and an
 * icon per state family, so the same word has the same look on every screen.
 */
const FAMILIES: readonly { states: readonly string[]; color: string; icon: string }[] = [
  {
    states: ['started', 'downloaded', 'enabled', 'active', 'visible', 'restored'],
    color: 'green',
    icon: 'circle-check',
  },
  {
    states: ['stopped', 'disabled', 'invisible', 'recycled', 'deleted'],
    color: 'gray',
    icon: 'circle',
  },
  {
    states: ['failed', 'downloadfailed', 'downloadfailedinvalidformat', 'faileddeleted', 'unknown'],
    color: 'red',
    icon: 'alert-triangle',
  },
  {
    states: [
      'shutting-down',
      'stopping',
      'maintenance',
      'deleting',
      'forcedeleting',
      'downloadaborting',
    ],
    color: 'orange',
    icon: 'hourglass',
  },
  { states: ['waitingip', 'paused', 'queued'], color: 'yellow', icon: 'clock' },
];

/** Mantine colour of a state (blue for the transitional rest: starting, creating, downloading...). */
export function stateColor(state: string): string {
  return FAMILIES.find((f) => f.states.includes(state))?.color ?? 'blue';
}

/** Icon name of a state. */
export function stateIcon(state: string): string {
  return FAMILIES.find((f) => f.states.includes(state))?.icon ?? 'loader';
}
