/**
 * What features add to the resource engine, by the names the schemas use: card renderers
 * (`x-ui.list.card`), cell renderers and input widgets (`x-ui.widget`), action handlers
 * (`x-actions.actions.<name>.handler`) and action effects (`.effect`). Form extensions register
 * with the form pages (./form-pages.tsx).
 */
import { registerActionEffect } from '@/resources/actions/action-effects';
import { registerActionHandler } from '@/resources/actions/action-registry';
import { DownloadAction } from '@/resources/actions/download-action';
import { registerCard } from '@/resources/cards/card-registry';
import { DesktopCard } from '@/features/desktops/desktop-card';
import { OpenDesktopAction } from '@/features/viewers/open-desktop-action';
import { AllowedAction } from '@/features/allowed/allowed-action';
import { BookingViewAction } from '@/features/bookings/booking-view-action';
import { DirectLinkAction } from '@/features/direct-viewer/direct-link-action';
import { BastionAction } from '@/features/bastion/bastion-action';
import { AllowedListWidget } from '@/features/allowed/allowed-list-widget';
import { AllowedWidget } from '@/features/allowed/allowed-widget';
import { UserPickerWidget } from '@/features/allowed/user-picker-widget';
import { registerWidget } from '@/resources/form/widget-registry';
import { ImagePickerWidget } from '@/features/desktop-form/image-picker-widget';
import { registerCell } from '@/resources/cells/cell-registry';
import { profileCells } from '@/features/profile/profile-cells';
import { LazyExpiryDateWidget } from '@/features/profile/lazy-expiry-date-widget';
import { LanguageWidget } from '@/features/profile/language-widget';
import { switchLanguage } from '@/features/profile/language';
import { EnrolPasskeyAction } from '@/features/passkeys/enrol-passkey-action';

registerCard('desktopCard', DesktopCard);
registerActionHandler('openDesktop', OpenDesktopAction);
registerActionHandler('allowedModal', AllowedAction);
registerActionHandler('directLinkModal', DirectLinkAction);
registerActionHandler('bastionModal', BastionAction);
registerActionHandler('downloadFile', DownloadAction);
registerActionHandler('bookingView', BookingViewAction);
registerActionHandler('enrolPasskey', EnrolPasskeyAction);
registerWidget('allowed', AllowedWidget);
registerWidget('allowedUsers', AllowedListWidget);
registerWidget('allowedGroups', AllowedListWidget);
registerWidget('imagePicker', ImagePickerWidget);
registerWidget('userPicker', UserPickerWidget);
for (const [name, cell] of Object.entries(profileCells)) registerCell(name, cell);
registerWidget('language', LanguageWidget);
registerWidget('expiryDate', LazyExpiryDateWidget);
registerActionEffect('switchLanguage', switchLanguage);
