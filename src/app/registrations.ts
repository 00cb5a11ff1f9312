/**
 * What features add to the resource engine, by the names the schemas use: card renderers
 * (`x-ui.list.card`) and action handlers (`x-actions.actions.<name>.handler`). Form extensions
 * register with the form pages (./form-pages.tsx).
 */
import { registerActionHandler } from '@/resources/actions/action-registry';
import { registerCard } from '@/resources/cards/card-registry';
import { DesktopCard } from '@/features/desktops/desktop-card';
import { OpenDesktopAction } from '@/features/viewers/open-desktop-action';

registerCard('desktopCard', DesktopCard);
registerActionHandler('openDesktop', OpenDesktopAction);
