/**
 * Light-variant text keeps AA contrast on its light background and its hover, in every colour;
 * modal close buttons are named.
 */
import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Alert, DEFAULT_THEME, MantineProvider, Modal, Notification } from '@mantine/core';
import {
  contrastRatio,
  lightVariantColors,
  readableOn,
  TEXT_CONTRAST,
  themeWithLabels,
} from './theme';

describe('theme contrast', () => {
  it('measures the WCAG ratio', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 1);
    expect(contrastRatio('#ffffff', '#ffffff')).toBeCloseTo(1, 5);
  });

  it('darkens green light-variant text until it reads on its background (was 3.8:1)', () => {
    const { green } = DEFAULT_THEME.colors;
    expect(contrastRatio(green[9], green[1])).toBeLessThan(TEXT_CONTRAST);
    const readable = lightVariantColors()['--mantine-color-green-light-color'];
    expect(readable).toBeDefined();
    expect(contrastRatio(readable ?? '', green[1])).toBeGreaterThanOrEqual(TEXT_CONTRAST);
  });

  it('leaves every colour of the theme readable on its light background and hover', () => {
    const variables = lightVariantColors();
    for (const [name, shades] of Object.entries(DEFAULT_THEME.colors)) {
      const text = variables[`--mantine-color-${name}-light-color`] ?? shades[9];
      expect(contrastRatio(text, shades[1]), name).toBeGreaterThanOrEqual(TEXT_CONTRAST);
      expect(contrastRatio(text, shades[2]), name).toBeGreaterThanOrEqual(TEXT_CONTRAST);
    }
  });

  it('keeps a colour that already reads', () => {
    expect(readableOn('#000000', ['#ffffff'])).toBe('#000000');
  });
});

describe('theme labels', () => {
  it('names the close button of every modal, whose header is no banner', async () => {
    render(
      <MantineProvider theme={themeWithLabels('Close')}>
        <Modal opened onClose={() => undefined} title="Rename" transitionProps={{ duration: 0 }}>
          body
        </Modal>
      </MantineProvider>,
    );
    expect(await screen.findByRole('button', { name: 'Close' })).toBeInTheDocument();
    expect(screen.queryByRole('banner')).toBeNull();
  });

  it('names the close button of a toast and of an alert', () => {
    const { container } = render(
      <MantineProvider theme={themeWithLabels('Close')}>
        <Notification title="Saved">done</Notification>
        <Alert withCloseButton title="Note">
          text
        </Alert>
      </MantineProvider>,
    );
    expect(within(container).getAllByRole('button', { name: 'Close' })).toHaveLength(2);
  });
});
