/** The account mails in Korean. */
import type { MailTexts } from './types.ts';

export const ko: MailTexts = {
  verifyEmail: (v) => ({
    subject: '이메일 주소를 확인하세요',
    before: [
      `${v.name}님, 안녕하세요.`,
      `${v.minutes}분 안에 이 링크를 열어 ${v.email}이(가) ${v.site}의 ${v.username} 계정 주소임을 확인하세요:`,
    ],
    action: '내 주소 확인',
    after: ['요청하지 않으셨다면 이 메일을 무시하세요.'],
  }),
  resetPassword: (v) => ({
    subject: '비밀번호를 재설정하세요',
    before: [
      `${v.name}님, 안녕하세요.`,
      `누군가 ${v.site}의 ${v.username} 계정 비밀번호 재설정을 요청했습니다. 새 비밀번호를 정하려면 ${v.minutes}분 안에 이 링크를 여세요:`,
    ],
    action: '새 비밀번호 정하기',
    after: [
      '이 링크는 한 번만 사용할 수 있습니다. 요청하지 않으셨다면 이 메일을 무시하세요. 비밀번호는 그대로 유지됩니다.',
    ],
  }),
  register: (v) => ({
    subject: '계정 만들기를 완료하세요',
    before: [
      `${v.name}님, 안녕하세요.`,
      `${v.site}에서 ${v.username} 계정을 만들려면 ${v.minutes}분 안에 이 링크를 열고 받은 등록 코드를 입력하세요:`,
    ],
    action: '내 계정 만들기',
    after: ['요청하지 않으셨다면 이 메일을 무시하세요.'],
  }),
  accountExists: (v) => ({
    subject: '가입 요청 안내',
    before: [
      '안녕하세요.',
      `누군가 ${v.site}에서 이 주소로 ${v.username} 계정을 만들려고 했지만, 해당 사용자 이름 또는 이 주소가 이미 등록되어 있어 계정이 만들어지지 않았습니다.`,
      '본인의 계정인데 비밀번호를 잊으셨다면 여기에서 재설정할 수 있습니다:',
    ],
    action: '내 비밀번호 재설정',
    after: ['그렇지 않다면 다른 사용자 이름을 선택하거나 이 메일을 무시하세요.'],
  }),
};
