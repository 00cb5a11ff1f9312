/** Cards keep their own height: a row of cards is not stretched to its tallest card. */
import { cleanup, screen } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import '@/app/registrations';
import { ResourceListPage } from '@/resources/list/resource-list-page';
import { renderEngine, stubLayout } from '@/resources/testing/engine-test-wrapper';

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
});
afterAll(() => restoreLayout());
afterEach(() => {
  cleanup();
  localStorage.clear();
});

const desktop = { id: 'd1', name: 'Lab desktop', type: 'persistent', state: 'stopped' };

it('keeps each card at its own height instead of stretching it to the row', async () => {
  renderEngine(<ResourceListPage resource="desktops" />, {
    url: '/desktops',
    records: { desktops: [desktop, { ...desktop, id: 'd2', name: 'Other desktop' }] },
  });
  const collection = await screen.findByTestId('resource-collection');
  expect(collection).toHaveAttribute('data-view', 'cards');
  expect(collection.querySelector('[role="list"]')).toHaveStyle({ alignItems: 'start' });
});
