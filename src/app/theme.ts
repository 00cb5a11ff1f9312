/**
 * The Mantine theme and its CSS variables. Text drawn in a colour on that colour's light
 * background (light badges, the active navbar entry, calendar shading) keeps WCAG AA contrast
 * (4.5:1) in the light scheme, also on the hover background, for every colour of the theme.
 */
import {
  createTheme,
  darken,
  DEFAULT_THEME,
  type CSSVariablesResolver,
  type MantineThemeOverride,
} from '@mantine/core';

/** The minimum contrast ratio of normal text (WCAG 2 AA). */
export const TEXT_CONTRAST = 4.5;

/** Red, green and blue (0–255) of a `#rrggbb` or `rgb(a)(…)` colour. */
function channels(color: string): [number, number, number] {
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (hex) return [1, 2, 3].map((i) => parseInt(hex[i] ?? '0', 16)) as [number, number, number];
  const rgb = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)/i.exec(color);
  if (rgb) return [1, 2, 3].map((i) => Number(rgb[i])) as [number, number, number];
  throw new Error(`not a colour: ${color}`);
}

function relativeLuminance(color: string): number {
  const [r, g, b] = channels(color).map((value) => {
    const c = value / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The WCAG contrast ratio of two opaque colours. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [
    number,
    number,
  ];
  return (light + 0.05) / (dark + 0.05);
}

/** `color`, darkened just enough to reach `min` contrast on every one of `backgrounds`. */
export function readableOn(color: string, backgrounds: readonly string[], min = TEXT_CONTRAST) {
  let result = color;
  for (let amount = 0.05; amount <= 1; amount += 0.05) {
    if (backgrounds.every((background) => contrastRatio(result, background) >= min)) break;
    result = darken(color, amount);
  }
  return result;
}

export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  autoContrast: true,
  luminanceThreshold: 0.17,
  defaultRadius: 'md',
  // Transitions (dialogs, menus, the navbar) are skipped for who asks for reduced motion.
  respectReducedMotion: true,
});

/**
 * The theme with the labels its components need in the interface language: the close button of
 * every modal, drawer, toast and alert is named (it is an icon alone).
 */
export function themeWithLabels(closeLabel: string): MantineThemeOverride {
  const closeButtonProps = { 'aria-label': closeLabel };
  return {
    ...theme,
    components: {
      ...theme.components,
      // Plain objects, not `Modal.extend`: the login route does not load the modal's code.
      // A dialog's header is its title row, not a second banner landmark of the page.
      Modal: { defaultProps: { closeButtonProps, attributes: { header: { role: 'none' } } } },
      Drawer: { defaultProps: { closeButtonProps, attributes: { header: { role: 'none' } } } },
      Notification: { defaultProps: { closeButtonProps } },
      Alert: { defaultProps: { closeButtonLabel: closeLabel } },
      // A loader is a status: its label (loading…) is allowed on that role only.
      Loader: { defaultProps: { role: 'status' } },
    },
  };
}

/**
 * The light scheme's `--mantine-color-<name>-light-color` (shade 9 by default), darkened where
 * shade 9 is too light for the light background (shade 1) or its hover (shade 2).
 */
export function lightVariantColors(
  colors: Readonly<Record<string, readonly string[]>> = DEFAULT_THEME.colors,
): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const [name, shades] of Object.entries(colors)) {
    const [text, background, hover] = [shades[9], shades[1], shades[2]];
    if (!text || !background || !hover) continue;
    const readable = readableOn(text, [background, hover]);
    if (readable !== text) variables[`--mantine-color-${name}-light-color`] = readable;
  }
  return variables;
}

export const cssVariablesResolver: CSSVariablesResolver = (t) => ({
  variables: {},
  light: {
    ...lightVariantColors(t.colors),
    '--mantine-color-dimmed': t.colors.gray[7] ?? '#495057',
    '--mantine-color-anchor': t.colors.blue[9] ?? '#1864ab',
  },
  dark: { '--mantine-color-dimmed': t.colors.dark[1] ?? '#c9c9c9' },
});
