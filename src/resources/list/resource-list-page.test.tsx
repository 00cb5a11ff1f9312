/**
 * A list whose tab holds nothing says the tab is empty; "nothing matches the filter" is for a
 * search or a toggle of the user's.
 */
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UserConfig } from '@/generated/types';
import { updateSessionState } from '@/lib/session-state';
import { renderEngine, stubLayout } from '../testing/engine-test-wrapper';
import { ResourceListPage } from './resource-list-page';

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
});
afterAll(() => restoreLayout());
afterEach(() => {
  cleanup();
  localStorage.clear();
});

const desktop = {
  id: 'd1',
  name: 'Lab desktop',
  type: 'persistent',
  state: 'stopped',
  template: 'demo-template',
};

describe('the list page', () => {
  it('says an empty tab is empty, not that a filter matches nothing', async () => {
    renderEngine(<ResourceListPage resource="desktops" />, {
      url: '/desktops',
      records: { desktops: [desktop] },
    });
    act(() => updateSessionState({ config: { show_temporal_tab: true } as UserConfig }));
    fireEvent.click(await screen.findByTestId('tab-temporary'));
    expect(await screen.findByTestId('tab-empty')).toHaveTextContent(
      'Nothing under “Temporary” yet.',
    );
    expect(screen.queryByTestId('no-matches')).toBeNull();
  });
});
