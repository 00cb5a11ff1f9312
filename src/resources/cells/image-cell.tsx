import { stockGradient } from '@/lib/stock-card';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A card image: the uploaded picture, or the stock card drawn as a gradient. */
export function ImageCell({ value }: CellProps) {
  const image = value as { id?: string; url?: string } | null | undefined;
  if (!image) return empty;
  return image.url ? (
    <img
      src={image.url}
      alt=""
      width={48}
      height={27}
      style={{ objectFit: 'cover', borderRadius: 4 }}
    />
  ) : (
    <span
      aria-hidden
      style={{
        display: 'inline-block',
        width: 48,
        height: 27,
        borderRadius: 4,
        background: stockGradient(image.id ?? '1'),
      }}
    />
  );
}
