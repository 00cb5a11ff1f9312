/** The account mails in Simplified Chinese. */
import type { MailTexts } from './types.ts';

export const zhHans: MailTexts = {
  verifyEmail: (v) => ({
    subject: '确认你的电子邮件地址',
    before: [
      `${v.name}，你好：`,
      `请在 ${v.minutes} 分钟内打开以下链接，确认 ${v.email} 是你在 ${v.site} 上的账户 ${v.username} 的地址：`,
    ],
    action: '确认我的地址',
    after: ['如果这不是你发起的请求，请忽略此邮件。'],
  }),
  resetPassword: (v) => ({
    subject: '重置你的密码',
    before: [
      `${v.name}，你好：`,
      `有人请求重置 ${v.site} 上账户 ${v.username} 的密码。请在 ${v.minutes} 分钟内打开以下链接设置新密码：`,
    ],
    action: '设置新密码',
    after: ['此链接仅可使用一次。如果这不是你发起的请求，请忽略此邮件：你的密码将保持不变。'],
  }),
  register: (v) => ({
    subject: '完成账户创建',
    before: [
      `${v.name}，你好：`,
      `要在 ${v.site} 上创建账户 ${v.username}，请在 ${v.minutes} 分钟内打开以下链接，并输入你收到的注册码：`,
    ],
    action: '创建我的账户',
    after: ['如果这不是你发起的请求，请忽略此邮件。'],
  }),
  accountExists: (v) => ({
    subject: '关于你的注册申请',
    before: [
      '你好：',
      `有人请求在 ${v.site} 上使用此地址创建账户 ${v.username}，但该用户名或此地址已被注册，因此未创建任何账户。`,
      '如果该账户是你的，而你忘记了密码，可以在这里重置：',
    ],
    action: '重置我的密码',
    after: ['否则，请选择其他用户名，或忽略此邮件。'],
  }),
};
