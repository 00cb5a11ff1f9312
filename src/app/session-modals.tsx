import { useEffect } from 'react';
import { Button, Group, Modal, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { closeQuotaPopup, useQuotaPopup } from '@/lib/error-display';
import { navigateTo } from '@/lib/navigation';
import { setSessionModal, useSessionModal } from '@/lib/session-modal-store';
import { selectSessionTimes, useSessionValue } from '@/lib/session-state';
import { computeSessionTimers } from '@/lib/session-timers';
import { logout } from '@/providers/auth-provider';
import { renewToken } from '@/providers/http-client';
import { NotificationModals } from '@/features/notifications/notification-modals';
import { refreshSession } from './session-bootstrap';
import { PROFILE_PATH } from '@/lib/paths';

const profilePath = PROFILE_PATH;

/** Schedules the renew prompt and the expired modal from the config's session times. */
function useSessionTimers(): void {
  const session = useSessionValue(selectSessionTimes);
  useEffect(() => {
    const timers = computeSessionTimers(session, Date.now());
    if (!timers) return undefined;
    const prompt = setTimeout(() => setSessionModal('renew'), timers.promptInMs);
    const expire = setTimeout(() => setSessionModal('logout'), timers.expireInMs);
    return () => {
      clearTimeout(prompt);
      clearTimeout(expire);
    };
  }, [session]);
}

/** Expired-session modal (kinds renew and logout), the quota popup and the server's notifications. */
export function SessionModals() {
  const { t } = useTranslation();
  const kind = useSessionModal();
  const quota = useQuotaPopup();
  useSessionTimers();

  const renew = async (): Promise<void> => {
    try {
      await renewToken();
      setSessionModal(null);
      await refreshSession();
    } catch {
      setSessionModal('logout');
    }
  };

  return (
    <>
      <Modal
        opened={kind !== null}
        onClose={() => (kind === 'renew' ? setSessionModal(null) : void logout())}
        title={kind === 'renew' ? t('common:session.renewTitle') : t('common:session.expiredTitle')}
        centered
        closeOnClickOutside={false}
        data-testid="session-modal"
        data-kind={kind ?? ''}
      >
        <Text mb="md">
          {kind === 'renew' ? t('common:session.renewBody') : t('common:session.expiredBody')}
        </Text>
        <Group justify="flex-end">
          {kind === 'renew' && (
            <Button onClick={() => void renew()}>{t('common:session.renew')}</Button>
          )}
          <Button variant={kind === 'renew' ? 'default' : 'filled'} onClick={() => void logout()}>
            {t('common:actions.logout')}
          </Button>
        </Group>
      </Modal>
      <Modal
        opened={quota !== null}
        onClose={closeQuotaPopup}
        title={t('common:quota.title')}
        centered
      >
        <Text mb="md">{quota}</Text>
        <Group justify="flex-end">
          {profilePath && (
            <Button
              variant="default"
              onClick={() => {
                closeQuotaPopup();
                navigateTo(profilePath);
              }}
            >
              {t('common:quota.goToQuota')}
            </Button>
          )}
          <Button onClick={closeQuotaPopup}>{t('common:actions.ok')}</Button>
        </Group>
      </Modal>
      <NotificationModals />
    </>
  );
}
