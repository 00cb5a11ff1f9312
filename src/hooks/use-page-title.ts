import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';

/** Sets the document title to the product name plus the route title. */
export function usePageTitle(title: string | null | undefined): void {
  const { t } = useTranslation();
  const product = t('common:product');
  useEffect(() => {
    document.title = title ? `${product} - ${title}` : product;
  }, [product, title]);
}
