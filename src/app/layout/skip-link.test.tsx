/** The app shell's first focusable element is the skip link, and it moves the focus to the main content. */
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderEngine } from '@/resources/testing/engine-test-wrapper';
import { AppLayout } from './app-layout';
import { MAIN_CONTENT_ID } from './skip-link';

const FOCUSABLE = 'a[href], button:not([disabled]), input, select, textarea, [tabindex="0"]';

describe('skip link', () => {
  it('is the first focusable element of the shell and focuses the main content', async () => {
    const { container } = renderEngine(
      <AppLayout>
        <h1>Page</h1>
      </AppLayout>,
      { role: 'user' },
    );
    await screen.findByRole('heading', { name: 'Page' });
    const first = container.ownerDocument.querySelector<HTMLElement>(FOCUSABLE);
    expect(first).toHaveTextContent('Skip to main content');
    fireEvent.click(screen.getByRole('link', { name: 'Skip to main content' }));
    await waitFor(() => expect(document.activeElement?.id).toBe(MAIN_CONTENT_ID));
    expect(document.activeElement).toContainElement(screen.getByRole('heading', { name: 'Page' }));
  });
});
