import { useEffect, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { Center, Loader } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { selectConfig, selectUser, useSessionValue } from '@/lib/session-state';
import { adoptAuthorizationCookie, decodeToken, getToken } from '@/lib/token';
import { logout } from '@/providers/auth-provider';
import { renewToken } from '@/providers/http-client';
import { bootstrapSession } from '../session-bootstrap';
import { decideMigrationBlock, decideToken } from './guard-decision';

export interface SessionGuardProps {
  /** Content shown once the session is ready. */
  children: ReactNode;
}

/**
 * Runs the navigation guard on every protected navigation: special tokens go to their page, a
 * login token near its end is renewed, the session is bootstrapped, and an account blocked for a
 * migration stays on the export page.
 */
export function SessionGuard({ children }: SessionGuardProps) {
  const location = useLocation();
  const navigate = useNavigate();
  const user = useSessionValue(selectUser);
  const config = useSessionValue(selectConfig);
  const { t } = useTranslation();
  const blockedTo = decideMigrationBlock(config, location.pathname);

  // A user whose account is being migrated stays on the export page.
  useEffect(() => {
    if (blockedTo) navigate(blockedTo, { replace: true });
  }, [blockedTo, navigate]);

  useEffect(() => {
    let cancelled = false;
    const run = async (): Promise<void> => {
      const token = adoptAuthorizationCookie();
      const decision = decideToken(decodeToken(token), !!token, location.pathname, Date.now());
      if (decision.kind === 'login') {
        navigate('/login', { replace: true });
        return;
      }
      if (decision.kind === 'redirect') {
        navigate(decision.to, { replace: true });
        return;
      }
      if (decision.kind === 'renew') {
        try {
          await renewToken();
        } catch {
          // a sign-in stored another session meanwhile (another tab): decide again with it
          if (getToken() !== token) {
            if (!cancelled) await run();
            return;
          }
          await logout(token);
          return;
        }
      }
      if (!cancelled) await bootstrapSession();
    };
    run().catch((error: unknown) => console.warn('guard', error));
    return () => {
      cancelled = true;
    };
  }, [location.pathname, navigate]);

  if (!user || blockedTo) {
    return (
      <Center h="100vh" aria-busy="true">
        <Loader aria-label={t('common:loading')} />
      </Center>
    );
  }
  return <>{children}</>;
}
