/**
 * Back on the list after a create, the keyboard focus is on the new record's row (scrolled into
 * the virtualised table however far down it is), and a polite status names it; a create answer
 * without an id finds the record by its title among the records the list did not hold before.
 */
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Route, Routes } from 'react-router';
import { ResourceFormPage } from '../form/resource-form-page';
import { forgetCreated, rememberCreated } from '../actions/created-record';
import { renderEngine, stubLayout } from '../testing/engine-test-wrapper';
import { ResourceListPage } from './resource-list-page';

/**
 * Besides sizes, a scroll region that can scroll: jsdom has no `scrollTo` on elements and gives a
 * scroll height of 0 (so nothing can scroll). Returns the function that takes it back.
 */
function stubScrolling(): () => void {
  const names = ['scrollTo', 'scrollHeight'] as const;
  const saved = names.map(
    (name) => [name, Object.getOwnPropertyDescriptor(Element.prototype, name)] as const,
  );
  Object.defineProperty(Element.prototype, 'scrollHeight', {
    configurable: true,
    get: () => 100_000,
  });
  Object.defineProperty(Element.prototype, 'scrollTo', {
    configurable: true,
    writable: true,
    value(this: Element, options?: ScrollToOptions) {
      if (typeof options?.top === 'number') this.scrollTop = options.top;
      this.dispatchEvent(new Event('scroll'));
    },
  });
  return () => {
    for (const [name, descriptor] of saved)
      if (descriptor) Object.defineProperty(Element.prototype, name, descriptor);
      else Reflect.deleteProperty(Element.prototype, name);
  };
}

let restoreLayout: () => void;
let restoreScrolling: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
  restoreScrolling = stubScrolling();
});
afterAll(() => {
  restoreScrolling();
  restoreLayout();
});
afterEach(() => {
  cleanup();
  forgetCreated();
  localStorage.clear();
});

/** 200 categories in name order; the new one, "Physics", far below the first screen. */
const categories = Array.from({ length: 200 }, (_, i) => ({
  id: `c${String(i).padStart(3, '0')}`,
  name: `Category ${String(i).padStart(3, '0')}`,
  description: '',
}));
categories.splice(150, 0, { id: 'new', name: 'Category 149b Physics', description: '' });

const focusedRecord = () => document.activeElement?.closest('[data-record-id]');

describe('the focus after a create', () => {
  it('lands on the new row of the list the form returns to, announced politely', async () => {
    renderEngine(
      <Routes>
        <Route
          path="/admin/categories/new"
          element={<ResourceFormPage resource="adminCategories" mode="create" />}
        />
        <Route path="/admin/categories" element={<ResourceListPage resource="adminCategories" />} />
      </Routes>,
      { url: '/admin/categories/new', role: 'admin', records: { adminCategories: categories } },
    );
    const name = await screen.findByRole('textbox', { name: /^Name/ });
    fireEvent.change(name, { target: { value: 'Category 149b Physics' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));

    await waitFor(() => expect(focusedRecord()?.getAttribute('data-record-id')).toBe('new'), {
      timeout: 3000,
    });
    expect(document.activeElement).toBe(focusedRecord());
    expect(screen.getByTestId('list-announcement')).toHaveAttribute('role', 'status');
    // The announcement is a state update of the focus callback: React renders it a moment later.
    await waitFor(() =>
      expect(screen.getByTestId('list-announcement')).toHaveTextContent(
        '“Category 149b Physics” is now in the list, with the focus on it.',
      ),
    );
  });

  it('finds a record the create answer names no id for by its title, among the new ones', async () => {
    const media = [
      { id: 'm1', name: 'Debian netinst', kind: 'iso', status: 'Downloaded' },
      { id: 'm2', name: 'Debian netinst', kind: 'iso', status: 'Downloading' },
      { id: 'm3', name: 'Alpine', kind: 'iso', status: 'Downloaded' },
    ];
    rememberCreated({
      resource: 'media',
      id: null,
      title: 'Debian netinst',
      before: new Set(['m1', 'm3']),
    });
    renderEngine(<ResourceListPage resource="media" />, {
      url: '/media',
      role: 'advanced',
      records: { media },
    });
    await waitFor(() => expect(focusedRecord()?.getAttribute('data-record-id')).toBe('m2'), {
      timeout: 3000,
    });
    expect(screen.getByTestId('list-announcement')).toHaveTextContent('“Debian netinst”');
  });

  it('leaves the focus where the user has put it meanwhile', async () => {
    rememberCreated({ resource: 'adminCategories', id: 'new', title: 'x', before: null });
    const { container } = renderEngine(<ResourceListPage resource="adminCategories" />, {
      url: '/admin/categories',
      role: 'admin',
      records: { adminCategories: categories },
    });
    const filter = await screen.findByTestId('resource-filter');
    filter.focus();
    await waitFor(() => expect(container.querySelector('[data-record-id="new"]')).not.toBeNull());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(document.activeElement).toBe(filter);
  });
});
