/** Entry: Mantine CSS (per component), i18n, then the SPA. */
import '@mantine/core/styles/baseline.css';
import '@mantine/core/styles/default-css-variables.css';
import '@mantine/core/styles/global.css';
import '@mantine/core/styles/UnstyledButton.css';
import '@mantine/core/styles/Button.css';
import '@mantine/core/styles/Input.css';
import '@mantine/core/styles/InlineInput.css';
import '@mantine/core/styles/PasswordInput.css';
// the chevron of the login form's selects (language, colour scheme, category)
import '@mantine/core/styles/Combobox.css';
import '@mantine/core/styles/ActionIcon.css';
import '@mantine/core/styles/Paper.css';
import '@mantine/core/styles/Stack.css';
import '@mantine/core/styles/Group.css';
import '@mantine/core/styles/Title.css';
import '@mantine/core/styles/Text.css';
import '@mantine/core/styles/Anchor.css';
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/Center.css';
import '@mantine/core/styles/Loader.css';
import '@mantine/core/styles/Notification.css';
import '@mantine/core/styles/CloseButton.css';
import '@mantine/core/styles/VisuallyHidden.css';
import '@mantine/notifications/styles.css';
import './styles.css';
// First: the first screen's reads leave before the rest of the entry evaluates.
import '@/app/entry-reads';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { initI18n } from '@/i18n/i18n';
import { detectLanguage, LOGIN_NAMESPACES } from '@/i18n/languages';
import { Root, rootReady } from '@/app/root';

const container = document.getElementById('root');
if (container) {
  // The first page renders with the login catalogues; the application loads the others with it.
  void Promise.all([initI18n(detectLanguage(), LOGIN_NAMESPACES), rootReady()]).then(() => {
    createRoot(container).render(
      <StrictMode>
        <Root />
      </StrictMode>,
    );
  });
}
