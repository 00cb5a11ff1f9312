/**
 * Known-common passwords: the list in common-passwords.txt beside this file (one a line: the most
 * used passwords of public leak studies, keyboard walks, repeated characters and sequences, common
 * words and names of several languages), kept in the repository so no install or network is needed.
 *
 * A password is common when, compared without case (and with the usual letter-for-digit swaps
 * undone, `p@ssw0rd` -> `password`):
 * - it is a list entry;
 * - it is a list entry with digits or punctuation before or after it (`password123`, `Summer2024!`);
 * - it is the username with only digits or punctuation added (`alice1990!`).
 */
import { readFileSync } from 'node:fs';

const LIST = new Set(
  readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.trim().toLowerCase())
    .filter((line) => line !== ''),
);

/** Digit and symbol swaps people use for letters. */
const UNLEET: Readonly<Record<string, string>> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '8': 'b',
  '@': 'a',
  $: 's',
  '!': 'i',
  '|': 'l',
};

const unleet = (text: string) => [...text].map((ch) => UNLEET[ch] ?? ch).join('');

/** Anything but a letter at either end: the digits and punctuation added to a word. */
const PADDING = /^[^\p{L}]+|[^\p{L}]+$/gu;

/** Whether `password` is known-common for the user `username` (see the file comment). */
export function isCommonPassword(password: string, username = ''): boolean {
  const text = password.normalize('NFKC').toLowerCase();
  if (LIST.has(text) || LIST.has(unleet(text))) return true;
  const core = text.replace(PADDING, '');
  if (core.length >= 3 && (LIST.has(core) || LIST.has(unleet(core)))) return true;
  const unleetCore = unleet(text).replace(PADDING, '');
  if (unleetCore.length >= 3 && LIST.has(unleetCore)) return true;
  const name = username.normalize('NFKC').toLowerCase();
  return name.length >= 3 && text.includes(name) && /^[^\p{L}]*$/u.test(text.replace(name, ''));
}

/** How many entries the list holds (for the tests). */
export const COMMON_PASSWORD_COUNT = LIST.size;
