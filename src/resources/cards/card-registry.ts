/**
 * Card renderers for the cards view of a generated list (`x-ui.list.card`). Features register
 * theirs at start-up (the desktop card); an unknown name throws, naming the resource.
 */
import type { ComponentType } from 'react';

export interface CardProps {
  resource: string;
  record: Readonly<Record<string, unknown>>;
}

export type CardRenderer = ComponentType<CardProps>;

const cards = new Map<string, CardRenderer>();

export function registerCard(name: string, renderer: CardRenderer): void {
  cards.set(name, renderer);
}

export function hasCard(name: string): boolean {
  return cards.has(name);
}

/**
 * The card renderer of a resource's list.
 * @throws Error naming the resource when no renderer has that name
 */
export function resolveCard(resource: string, name: string): CardRenderer {
  const card = cards.get(name);
  if (!card) throw new Error(`No card renderer "${name}" registered for ${resource}`);
  return card;
}
