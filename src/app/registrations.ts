/**
 * What features add to the resource engine, by the names the schemas use: card renderers
 * (`x-ui.list.card`), action handlers (`x-actions.actions.<name>.handler`) and widgets several
 * resources' forms share (`x-ui.widget`). Form extensions register with the form pages
 * (./form-pages.tsx).
 */
import { registerActionHandler } from '@/resources/actions/action-registry';
import { DownloadAction } from '@/resources/actions/download-action';
import { registerCard } from '@/resources/cards/card-registry';
import { DesktopCard } from '@/features/desktops/desktop-card';
import { OpenDesktopAction } from '@/features/viewers/open-desktop-action';
import { AllowedAction } from '@/features/allowed/allowed-action';
import { DirectLinkAction } from '@/features/direct-viewer/direct-link-action';
import { AllowedListWidget } from '@/features/allowed/allowed-list-widget';
import { AllowedWidget } from '@/features/allowed/allowed-widget';
import { UserPickerWidget } from '@/features/allowed/user-picker-widget';
import { registerWidget } from '@/resources/form/widget-registry';
import { ImagePickerWidget } from '@/features/desktop-form/image-picker-widget';

registerCard('desktopCard', DesktopCard);
registerActionHandler('openDesktop', OpenDesktopAction);
registerActionHandler('allowedModal', AllowedAction);
registerActionHandler('directLinkModal', DirectLinkAction);
registerActionHandler('downloadFile', DownloadAction);
registerWidget('allowed', AllowedWidget);
registerWidget('allowedUsers', AllowedListWidget);
registerWidget('allowedGroups', AllowedListWidget);
registerWidget('imagePicker', ImagePickerWidget);
registerWidget('userPicker', UserPickerWidget);
