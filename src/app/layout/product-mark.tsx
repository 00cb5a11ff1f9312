export interface ProductMarkProps {
  /** Width and height in px; default 28. */
  size?: number;
}

/**
 * The product mark: a screen in the theme's primary colour holding a desktop window. Inline SVG
 * (no image request); decorative, the product name always sits beside it.
 */
export function ProductMark({ size = 28 }: ProductMarkProps) {
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 32 32"
      aria-hidden="true"
      focusable="false"
      data-testid="product-mark"
    >
      <rect
        x="2"
        y="4"
        width="28"
        height="19"
        rx="4"
        style={{ fill: 'var(--mantine-primary-color-filled)' }}
      />
      <rect
        x="6"
        y="8"
        width="20"
        height="11"
        rx="2"
        style={{ fill: 'var(--mantine-color-white)' }}
      />
      <rect
        x="6"
        y="8"
        width="20"
        height="3"
        rx="1.5"
        style={{ fill: 'var(--mantine-primary-color-light)' }}
      />
      <path
        d="M13 14.5l3 2.5 3-2.5"
        style={{
          fill: 'none',
          stroke: 'var(--mantine-primary-color-filled)',
          strokeWidth: 1.75,
          strokeLinecap: 'round',
          strokeLinejoin: 'round',
        }}
      />
      <path
        d="M12 28h8M16 23v5"
        style={{
          fill: 'none',
          stroke: 'var(--mantine-primary-color-filled)',
          strokeWidth: 2.5,
          strokeLinecap: 'round',
        }}
      />
    </svg>
  );
}
