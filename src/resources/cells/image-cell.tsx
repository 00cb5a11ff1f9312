import { cardImageSource } from './card-image';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A card image (its id or its stored object): the uploaded picture, or the stock card drawn as a gradient. */
export function ImageCell({ value }: CellProps) {
  const source = cardImageSource(value);
  if (!source) return empty;
  return 'url' in source ? (
    <img
      src={source.url}
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
        background: source.gradient,
      }}
    />
  );
}
