// @vitest-environment node
/**
 * States and roles are schema facts: the named state sets (`x-state-sets`), the role list and its
 * rank come from the generated `policy.ts`. Hand-written code never lists two desktop states, two
 * media states or two roles in an array literal, and never compares a role to a role name
 * (`role === 'admin'`): it names a generated set, `roles`, or `hasRoleAtLeast`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { desktopState, mediaStatus, roles } from '@/generated/policy';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The values whose lists are policy: two of the same vocabulary in one array is a hand-written set. */
const VOCABULARIES: readonly { name: string; values: ReadonlySet<string> }[] = [
  { name: 'desktop states', values: new Set(Object.values(desktopState)) },
  { name: 'media states', values: new Set(Object.values(mediaStatus)) },
  { name: 'roles', values: new Set(roles) },
];
const ROLE_NAMES: ReadonlySet<string> = new Set(roles);

interface Finding {
  file: string;
  line: number;
  text: string;
}

const isScanned = (name: string) =>
  /\.tsx?$/.test(name) && !/\.(test|spec)\.tsx?$/.test(name) && !name.endsWith('.d.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return rel === 'src/generated' || entry.name === 'node_modules' ? [] : sourceFiles(rel);
    return isScanned(entry.name) ? [rel] : [];
  });
}

const stringValue = (node: ts.Node): string | null =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : null;

/** `role`, `user.role`, `this.role`, `req.user?.role`: an expression naming a role. */
function namesRole(node: ts.Expression): boolean {
  const inner = ts.isParenthesizedExpression(node) ? node.expression : node;
  if (ts.isIdentifier(inner)) return /role(_?id)?$/i.test(inner.text);
  if (ts.isPropertyAccessExpression(inner)) return /role(_?id)?$/i.test(inner.name.text);
  return false;
}

/** The array literals listing two values of one vocabulary, and role comparisons to a role name. */
function findPolicyLiterals(file: string, code: string): Finding[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const found: Finding[] = [];
  const report = (node: ts.Node) =>
    found.push({
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      text: node.getText(source).replace(/\s+/g, ' ').slice(0, 120),
    });
  const visit = (node: ts.Node): void => {
    if (ts.isArrayLiteralExpression(node)) {
      const strings = node.elements.map(stringValue).filter((s): s is string => s !== null);
      if (VOCABULARIES.some((v) => strings.filter((s) => v.values.has(s)).length >= 2))
        report(node);
    } else if (
      ts.isBinaryExpression(node) &&
      [
        ts.SyntaxKind.EqualsEqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsEqualsToken,
        ts.SyntaxKind.EqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsToken,
      ].includes(node.operatorToken.kind)
    ) {
      const pairs: [ts.Expression, ts.Expression][] = [
        [node.left, node.right],
        [node.right, node.left],
      ];
      if (
        pairs.some(([side, other]) => {
          const value = stringValue(other);
          return value !== null && ROLE_NAMES.has(value) && namesRole(side);
        })
      )
        report(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const scan = (dirs: readonly string[]) =>
  dirs
    .flatMap(sourceFiles)
    .flatMap((file) => findPolicyLiterals(file, readFileSync(join(root, file), 'utf8')));

describe('states and roles come from the generated policy', () => {
  it('the scan finds hand-written sets and role comparisons, and nothing else', () => {
    const code = [
      "const a = ['stopped', 'failed'];",
      "const b = new Set(['downloading', 'downloadstarting']);",
      "if (user.role === 'admin') {}",
      "if ('manager' !== role) {}",
      "const c = ['stopped', 'error'];",
      "const d = t('common:state.stopped');",
      "if (status === 'stopped') {}",
      "const e = [desktopState.stopped, 'failed'];",
      "if (kind === 'admin') {}",
      "if (session.role_id === 'user') {}",
    ].join('\n');
    expect(findPolicyLiterals('x.ts', code).map((f) => f.line)).toEqual([1, 2, 3, 4, 10]);
  });

  it('the SPA, common/ and the server write no state set, role list or role comparison', () => {
    expect(
      scan(['src', 'common', 'server/src']).map((f) => `${f.file}:${f.line} ${f.text}`),
    ).toEqual([]);
  });
});
