import { useCallback, useEffect, useState } from 'react';
import { Button, Group, Stack, Text } from '@mantine/core';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { constants } from '@/generated/constants';
import { clearToken, decodeToken, getToken, tokenType } from '@/lib/token';
import { LOGIN_PATH } from '@/providers/auth-provider';

const COUNTDOWN_SECONDS: number = constants.session.redirectCountdownSeconds.value;

/** Counts down, then leaves for the login, dropping an account-step token (never a session). */
export function LoginCountdown() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [left, setLeft] = useState(COUNTDOWN_SECONDS);
  const go = useCallback((): void => {
    if (tokenType(decodeToken(getToken())) !== 'login') clearToken();
    void navigate(LOGIN_PATH, { replace: true });
  }, [navigate]);
  useEffect(() => {
    if (left <= 0) {
      go();
      return;
    }
    const timer = setTimeout(() => setLeft((value) => value - 1), 1000);
    return () => clearTimeout(timer);
  }, [left, go]);
  return (
    <Stack gap="xs" data-testid="login-countdown" data-left={left}>
      <Text aria-live="polite">{t('common:form.countdown', { count: left })}</Text>
      <Group>
        <Button onClick={go}>{t('common:form.toLogin')}</Button>
      </Group>
    </Stack>
  );
}
