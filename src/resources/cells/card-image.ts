/**
 * Card images as the engine draws them. A list sends a card image as its id (a desktop's `image`),
 * a show answer as the stored object (`{ id, type, url }`): an uploaded card is fetched from the
 * card-image operation, any other id is a stock card drawn as a gradient.
 */
import { operations } from '@/generated/api';
import { stockGradient } from '@/lib/stock-card';
import { buildPath } from '@/providers/request-encoding';

/** An uploaded card's file name: a random name with an image extension. */
const UPLOADED = /^[A-Za-z0-9_-]+\.[a-z0-9]{1,5}$/;

export type CardImageSource = { url: string } | { gradient: string };

/** Where a card image comes from, by its id or its stored object; null when there is none. */
export function cardImageSource(value: unknown): CardImageSource | null {
  if (typeof value === 'string') {
    if (!value) return null;
    return UPLOADED.test(value)
      ? { url: buildPath(operations['desktops.cardImage'], { file: value }) }
      : { gradient: stockGradient(value) };
  }
  if (!value || typeof value !== 'object') return null;
  const image = value as { id?: unknown; url?: unknown };
  if (typeof image.url === 'string' && image.url) return { url: image.url };
  return { gradient: stockGradient(typeof image.id === 'string' ? image.id : '1') };
}
