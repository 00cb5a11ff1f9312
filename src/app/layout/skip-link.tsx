/**
 * "Skip to main content": the first focusable element of the app shell, shown when it has the
 * keyboard focus; it moves the focus to the main landmark, past the header and the navbar.
 */
import type { MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import classes from './skip-link.module.css';

/** The id of the main landmark the link leads to. */
export const MAIN_CONTENT_ID = 'main-content';

export function SkipLink() {
  const { t } = useTranslation();
  const skip = (event: MouseEvent<HTMLAnchorElement>) => {
    const main = document.getElementById(MAIN_CONTENT_ID);
    if (!main) return;
    // Focus, not the fragment: the router keeps the address and the focus lands in the content.
    event.preventDefault();
    main.focus();
  };
  return (
    <a className={classes.skipLink} href={`#${MAIN_CONTENT_ID}`} onClick={skip}>
      {t('common:nav.skipToMain')}
    </a>
  );
}
