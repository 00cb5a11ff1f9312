/**
 * Every description code the server can send has an English text in the `errors` namespace, the
 * one the SPA shows an error answer by (`errors:<code>`); a field code of an answer's `errors` map
 * is shown as `errors:validation.<code>` or else `errors:<code>`.
 *
 * The codes come from the server sources, read with the TypeScript parser, and from the schema:
 * - the code argument of `new ApiError(kind, description, code, …)` and `errorBody(…)` (the kind
 *   when the code is absent) and of `new MediaUrlError(code, …)`; the field codes of an
 *   ApiError's `errors` map and of `errorBody`'s;
 * - a code expression resolves through literals, conditionals, `??` and `||`, template literals
 *   whose parts resolve, object literals and local constants; a code that is a parameter of the
 *   function around it (a helper such as `exceeded(code)` or `tooManyRequests({ code })`) is
 *   collected from every call of that function, in its file and in the files that import it,
 *   re-exports followed;
 * - the schema's error kinds (a code defaults to the kind), the `x-actions` rule codes, the
 *   `x-constraints` codes, the `x-error` codes and the `codes` of `x-ui`.
 * A code expression that does not resolve is listed in UNRESOLVED with where its codes come from
 * instead; an entry that no longer occurs fails too, so the list stays true.
 *
 * The quota catalogue (`$defs.quotaCode`, the codes the SPA opens its quota popup for) is exactly
 * the quota and limit refusals the server sends, and `errors.json` keeps no text for one it does
 * not send.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { quotaCodes } from '@/generated/error-codes';

type Tree = Record<string, unknown>;
const root = join(__dirname, '..', '..');

/** A code expression the collector cannot resolve: where its codes come from, and the codes. */
interface Listed {
  reason: string;
  /** the codes it sends, when they are not collected from elsewhere (each needs a text too) */
  codes: readonly string[];
}

const fromSchema = (keyword: string): Listed => ({
  reason: `the code of a schema ${keyword} entry (collected from the schema)`,
  codes: [],
});

/**
 * The server's code expressions that do not resolve statically (`<file>: <expression>`), each with
 * where its codes come from.
 */
const UNRESOLVED: Readonly<Record<string, Listed>> = {
  'server/src/domains/account/routes/account-mail.ts: constraints.session.resetPasswordConfirmation.code':
    fromSchema('x-constraints'),
  'server/src/domains/account/routes/account.ts: constraints.profile.passwordConfirmation.code':
    fromSchema('x-constraints'),
  'server/src/domains/account/routes/account.ts: constraints.session.registerPasswordConfirmation.code':
    fromSchema('x-constraints'),
  'server/src/domains/bookings/booking-rules.ts: constraints.bookings[rule].code':
    fromSchema('x-constraints'),
  'server/src/domains/bookings/plan-changes.ts: constraints.planning[rule].code':
    fromSchema('x-constraints'),
  'server/src/domains/storage/storage-service.ts: constraints.storage.increaseWithinQuota.code':
    fromSchema('x-constraints'),
  'server/src/domains/desktops/desktop-rules.ts: stateActions.desktops.rules[rule].code':
    fromSchema('x-actions rule'),
  'server/src/domains/media/media-rules.ts: stateActions.media.rules[rule].code':
    fromSchema('x-actions rule'),
  'server/src/domains/quotas/deployment-quotas.ts: scope.code': {
    reason: "the group and category scopes of a new deployment's desktop limits",
    codes: ['desktop_new_group_limit_exceeded', 'desktop_new_category_limit_exceeded'],
  },
  'server/src/domains/account/migration-service.ts: ruleBroken(origin, target, items)': {
    reason: 'the return values of ruleBroken (migration-rules.ts)',
    codes: [
      'same_user_migration',
      'different_category_migration',
      'role_migration_admin',
      'role_migration_user',
    ],
  },
  'server/src/domains/account/migration-service.ts: quota[0]': {
    reason: 'the codes quotaErrors (migration-rules.ts) returns',
    codes: [
      'migration_desktop_quota_error',
      'migration_template_quota_error',
      'migration_media_quota_error',
      'migration_deployments_quota_error',
    ],
  },
  'server/src/domains/account/migration-transfer.ts: quota[0]': {
    reason: 'the codes quotaErrors (migration-rules.ts) returns, listed under migration-service.ts',
    codes: [],
  },
  'server/src/domains/media/media-context.ts: err.code': {
    reason: "a MediaUrlError's code (collected at each new MediaUrlError)",
    codes: [],
  },
  'server/src/domains/quotas/quotas.ts: `${prefix}_limit_exceeded`': {
    reason: 'checkDesktopStart: the group and category scopes of desktop_start',
    codes: ['desktop_start_group_limit_exceeded', 'desktop_start_category_limit_exceeded'],
  },
  'server/src/domains/quotas/quotas.ts: `${prefix}_memory_limit_exceeded`': {
    reason: 'checkDesktopStart: the group and category scopes of desktop_start',
    codes: [
      'desktop_start_group_memory_limit_exceeded',
      'desktop_start_category_memory_limit_exceeded',
    ],
  },
  'server/src/domains/quotas/quotas.ts: `${prefix}_vcpu_limit_exceeded`': {
    reason: 'checkDesktopStart: the group and category scopes of desktop_start',
    codes: [
      'desktop_start_group_vcpu_limit_exceeded',
      'desktop_start_category_vcpu_limit_exceeded',
    ],
  },
  'server/src/platform/auth/password-policy.ts: code': {
    reason: 'checkPassword: the codes of its table of counted characters',
    codes: [
      'password_uppercase',
      'password_lowercase',
      'password_digits',
      'password_special_characters',
    ],
  },
  'server/src/platform/http/api-error.ts: this.descriptionCode': {
    reason: "an ApiError's own code (collected at each new ApiError)",
    codes: [],
  },
  'server/src/platform/http/api-error.ts: this.errors.*': {
    reason: "an ApiError's own field codes (collected at each new ApiError)",
    codes: [],
  },
  'server/src/platform/http/errors.ts: fieldErrors(err.validation as ErrorObject[]).code': {
    reason: 'the x-error code of the failed schema keyword (collected from the schema)',
    codes: [],
  },
  'server/src/platform/http/errors.ts: fieldErrors(err.validation as ErrorObject[]).map.*': {
    reason:
      'the failed ajv keywords, shown as errors:validation.<keyword>, else errors:validation.invalid',
    codes: [],
  },
  'server/src/platform/http/errors.ts: kindForStatus(status)': {
    reason: 'the error kind of an HTTP status (every kind is collected from the schema)',
    codes: [],
  },
};

/** Where a code is written: the code itself (`code`) or a field code of an `errors` map. */
type Target = 'code' | 'field';

/**
 * A call that puts a code on the wire: the callee, whether it is constructed with `new`, the
 * argument and the property path inside it that hold the code (`*`: every value of a map), and
 * the argument whose value is the code when that argument is absent.
 */
interface Sink {
  callee: string;
  construct: boolean;
  arg: number;
  path: readonly string[];
  target: Target;
  fallback?: number;
}

const SINKS: readonly Sink[] = [
  { callee: 'ApiError', construct: true, arg: 2, path: [], target: 'code', fallback: 0 },
  { callee: 'ApiError', construct: true, arg: 4, path: ['errors', '*'], target: 'field' },
  { callee: 'errorBody', construct: false, arg: 2, path: [], target: 'code', fallback: 0 },
  { callee: 'errorBody', construct: false, arg: 4, path: ['*'], target: 'field' },
  { callee: 'MediaUrlError', construct: true, arg: 0, path: [], target: 'code' },
];

interface Source {
  /** path from the repository root, with `/` */
  path: string;
  text: string;
}

interface Collected {
  /** code -> the first place that sends it */
  codes: Map<string, string>;
  /** field code -> the first place that sends it */
  fieldCodes: Map<string, string>;
  /** `<file>: <expression>` of a code expression that does not resolve -> where it is */
  unresolved: Map<string, string>;
}

/** A function that carries a code through a parameter: where it is declared and its name. */
interface Helper {
  file: string;
  name: string;
  construct: boolean;
}

type FunctionNode = ts.SignatureDeclaration & { parameters: ts.NodeArray<ts.ParameterDeclaration> };

const withoutExtension = (path: string) => path.replace(/\.(ts|js|mjs)$/, '');

/** The expression inside parentheses, type assertions and non-null assertions. */
function stripped(node: ts.Expression): ts.Expression {
  let current = node;
  while (
    ts.isParenthesizedExpression(current) ||
    ts.isAsExpression(current) ||
    ts.isSatisfiesExpression(current) ||
    ts.isNonNullExpression(current) ||
    ts.isTypeAssertionExpression(current)
  )
    current = current.expression;
  return current;
}

/** The text of a property name that is written out (`code`, `'code'`), else null. */
function propertyName(name: ts.PropertyName | undefined): string | null {
  if (!name) return null;
  if (ts.isIdentifier(name) || ts.isStringLiteralLike(name) || ts.isNumericLiteral(name))
    return name.text;
  return null;
}

function isFunctionNode(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node)
  );
}

/** What an evaluation does with what it finds. */
interface Context {
  record: (code: string, target: Target, node: ts.Node) => void;
  unresolved: (node: ts.Node, path: readonly string[]) => void;
  /** the helper parameters this context has followed already */
  followed: Set<string>;
}

/** Collects the codes that the calls of SINKS in `sources`, and of their helpers, send. */
function collectServerCodes(sources: readonly Source[]): Collected {
  const files = new Map(
    sources.map((source) => [
      source.path,
      ts.createSourceFile(source.path, source.text, ts.ScriptTarget.Latest, true),
    ]),
  );
  const result: Collected = { codes: new Map(), fieldCodes: new Map(), unresolved: new Map() };

  const where = (node: ts.Node) => {
    const file = node.getSourceFile();
    return `${file.fileName}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  };
  const unresolvedKey = (node: ts.Node, path: readonly string[]) => {
    const text = stripped(node as ts.Expression)
      .getText()
      .replace(/\s+/g, ' ');
    return `${node.getSourceFile().fileName}: ${[text, ...path].join('.')}`;
  };
  const main: Context = {
    record: (code, target, node) => {
      const into = target === 'code' ? result.codes : result.fieldCodes;
      if (!into.has(code)) into.set(code, where(node));
    },
    unresolved: (node, path) => {
      const key = unresolvedKey(node, path);
      if (!result.unresolved.has(key)) result.unresolved.set(key, where(node));
    },
    followed: new Set(),
  };

  /** The file a relative module specifier of `from` names, if it is one of the sources. */
  const moduleFile = (from: string, specifier: string): string | undefined => {
    if (!specifier.startsWith('.')) return undefined;
    const base = withoutExtension(normalize(join(dirname(from), specifier)).replace(/\\/g, '/'));
    return [...files.keys()].find(
      (path) => withoutExtension(path) === base || path === `${base}/index.ts`,
    );
  };

  /** The file that declares what `file` exports as `name`, and its name there (re-exports followed). */
  const declaration = (
    file: string,
    name: string,
    seen = new Set<string>(),
  ): { file: string; name: string } | null => {
    const source = files.get(file);
    if (!source || seen.has(file)) return null;
    seen.add(file);
    for (const statement of source.statements) {
      if (!ts.isExportDeclaration(statement) || !statement.moduleSpecifier) continue;
      const target = moduleFile(file, (statement.moduleSpecifier as ts.StringLiteral).text);
      if (!target) continue;
      const clause = statement.exportClause;
      if (!clause) {
        const found = declaration(target, name, seen);
        if (found) return found;
      } else if (ts.isNamedExports(clause)) {
        const element = clause.elements.find((e) => e.name.text === name);
        if (element) return declaration(target, (element.propertyName ?? element.name).text, seen);
      }
    }
    return { file, name };
  };

  /** The local names under which `file` can call `helper` (its own, or imported ones). */
  const namesOf = (file: ts.SourceFile, helper: Helper): Set<string> => {
    const names = new Set<string>();
    if (file.fileName === helper.file) names.add(helper.name);
    for (const statement of file.statements) {
      if (!ts.isImportDeclaration(statement)) continue;
      const bindings = statement.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings)) continue;
      const target = moduleFile(
        file.fileName,
        (statement.moduleSpecifier as ts.StringLiteral).text,
      );
      if (!target) continue;
      for (const element of bindings.elements) {
        const found = declaration(target, (element.propertyName ?? element.name).text);
        if (found?.file === helper.file && found.name === helper.name) names.add(element.name.text);
      }
    }
    return names;
  };

  /** The helper a function is: its declared name, or the variable or class it is assigned to. */
  const helperOf = (fn: FunctionNode): Helper | null => {
    const file = fn.getSourceFile().fileName;
    if (ts.isFunctionDeclaration(fn) && fn.name)
      return { file, name: fn.name.text, construct: false };
    if (ts.isConstructorDeclaration(fn) && ts.isClassDeclaration(fn.parent) && fn.parent.name)
      return { file, name: fn.parent.name.text, construct: true };
    if (
      (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) &&
      ts.isVariableDeclaration(fn.parent) &&
      ts.isIdentifier(fn.parent.name)
    )
      return { file, name: fn.parent.name.text, construct: false };
    return null;
  };

  /** The binding an identifier names, looked up through the scopes around it. */
  const declarationOf = (id: ts.Identifier): ts.Node | null => {
    const name = id.text;
    const bindsName = (binding: ts.BindingName): ts.Node | null => {
      if (ts.isIdentifier(binding)) return binding.text === name ? binding : null;
      for (const element of binding.elements) {
        if (ts.isOmittedExpression(element)) continue;
        const found = bindsName(element.name);
        if (found) return found;
      }
      return null;
    };
    for (let scope: ts.Node | undefined = id.parent; scope; scope = scope.parent) {
      if (isFunctionNode(scope))
        for (const parameter of scope.parameters) {
          const found = bindsName(parameter.name);
          if (found) return found;
        }
      if (ts.isBlock(scope) || ts.isSourceFile(scope) || ts.isModuleBlock(scope))
        for (const statement of scope.statements)
          if (ts.isVariableStatement(statement))
            for (const declaration of statement.declarationList.declarations) {
              const found = bindsName(declaration.name);
              if (found) return found;
            }
    }
    return null;
  };

  /**
   * The parameter or variable a binding belongs to, and the property path from its value to the
   * bound name (`code` of `(code) =>` and of `const code = …`: none; of `({ code }) =>`: code).
   */
  const bindingRoot = (
    binding: ts.Node,
  ): { owner: ts.ParameterDeclaration | ts.VariableDeclaration; path: string[] } | null => {
    const path: string[] = [];
    let node: ts.Node = binding.parent;
    while (ts.isBindingElement(node)) {
      const pattern = node.parent;
      if (!ts.isObjectBindingPattern(pattern)) return null;
      const key = propertyName(node.propertyName ?? (node.name as ts.Identifier));
      if (key === null) return null;
      path.unshift(key);
      node = pattern.parent;
    }
    if (ts.isParameter(node) || ts.isVariableDeclaration(node)) return { owner: node, path };
    return null;
  };

  /** The defaults a binding gives its name (`code = 'not_found'`, `{ code = 'x' }`). */
  const defaultsOf = (binding: ts.Node): ts.Expression[] => {
    const found: ts.Expression[] = [];
    for (let node: ts.Node = binding.parent; ; node = node.parent.parent) {
      if ((ts.isBindingElement(node) || ts.isParameter(node)) && node.initializer)
        found.push(node.initializer);
      if (!ts.isBindingElement(node)) break;
    }
    return found;
  };

  /** A call of a sink: its arguments hold the code at `sink.arg` (or `sink.fallback`). */
  const atCall = (call: ts.CallExpression | ts.NewExpression, sink: Sink, ctx: Context) => {
    const args = call.arguments ?? [];
    const spread = args.findIndex((arg) => ts.isSpreadElement(arg));
    const spreadArg = args[spread];
    if (spreadArg && spread <= sink.arg) {
      ctx.unresolved(spreadArg, sink.path);
      return;
    }
    const arg = args[sink.arg];
    const fallback = sink.fallback === undefined ? undefined : args[sink.fallback];
    if (arg) evaluate(arg, sink.path, sink.target, ctx);
    else if (fallback) evaluate(fallback, [], sink.target, ctx);
  };

  /** Follows a helper: every call of it sends what it passes at `arg` (inside `path`). */
  const follow = (
    helper: Helper,
    from: ts.Node,
    arg: number,
    path: readonly string[],
    target: Target,
    ctx: Context,
  ) => {
    const key = `${helper.file}#${helper.name}#${arg}#${path.join('.')}#${target}`;
    if (ctx.followed.has(key)) return;
    ctx.followed.add(key);
    const sink: Sink = { callee: helper.name, construct: helper.construct, arg, path, target };
    let calls = 0;
    for (const file of files.values()) {
      const names = namesOf(file, helper);
      if (!names.size) continue;
      const visit = (node: ts.Node): void => {
        const call =
          helper.construct === ts.isNewExpression(node) &&
          (ts.isNewExpression(node) || ts.isCallExpression(node))
            ? node
            : null;
        if (call && ts.isIdentifier(call.expression) && names.has(call.expression.text)) {
          calls += 1;
          atCall(call, sink, ctx);
        }
        ts.forEachChild(node, visit);
      };
      visit(file);
    }
    // A helper whose calls are out of sight (passed as a value, called as a method) hides codes.
    if (!calls) ctx.unresolved(from, path);
  };

  const resolveIdentifier = (
    id: ts.Identifier,
    path: readonly string[],
    target: Target,
    ctx: Context,
  ) => {
    const declaration = declarationOf(id);
    const root = declaration ? bindingRoot(declaration) : null;
    if (!declaration || !root) {
      ctx.unresolved(id, path);
      return;
    }
    for (const value of defaultsOf(declaration)) evaluate(value, path, target, ctx);
    const full = [...root.path, ...path];
    if (ts.isParameter(root.owner)) {
      const fn = root.owner.parent;
      const helper = isFunctionNode(fn) ? helperOf(fn) : null;
      if (helper) follow(helper, id, fn.parameters.indexOf(root.owner), full, target, ctx);
      else ctx.unresolved(id, path);
      return;
    }
    const { initializer } = root.owner;
    if (initializer) evaluate(initializer, full, target, ctx);
    // A `let` holds the values of its assignments as well.
    const list = root.owner.parent;
    if (!ts.isVariableDeclarationList(list) || list.flags & ts.NodeFlags.Const) return;
    if (!initializer && root.path.length) ctx.unresolved(id, path);
    const visit = (node: ts.Node): void => {
      if (
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isIdentifier(node.left) &&
        node.left.text === id.text &&
        declarationOf(node.left) === declaration
      )
        evaluate(node.right, path, target, ctx);
      ts.forEachChild(node, visit);
    };
    visit(list.parent.parent);
  };

  /** The strings a template literal can be, when each of its parts resolves; else null. */
  const templateTexts = (node: ts.TemplateExpression, ctx: Context): string[] | null => {
    let texts = [node.head.text];
    for (const span of node.templateSpans) {
      const parts: string[] = [];
      let resolved = true;
      evaluate(span.expression, [], 'code', {
        record: (code) => parts.push(code),
        unresolved: () => {
          resolved = false;
        },
        followed: new Set(),
      });
      if (!resolved) {
        ctx.unresolved(node, []);
        return null;
      }
      texts = texts.flatMap((text) => parts.map((part) => `${text}${part}${span.literal.text}`));
    }
    return texts;
  };

  /** Collects the codes `expression` can hold at `path` (`*`: every value of a map). */
  const evaluate = (
    expression: ts.Expression,
    path: readonly string[],
    target: Target,
    ctx: Context,
  ): void => {
    const node = stripped(expression);
    const [head, ...rest] = path;
    if (ts.isIdentifier(node)) {
      if (node.text !== 'undefined') resolveIdentifier(node, path, target, ctx);
    } else if (ts.isConditionalExpression(node)) {
      evaluate(node.whenTrue, path, target, ctx);
      evaluate(node.whenFalse, path, target, ctx);
    } else if (
      ts.isBinaryExpression(node) &&
      (node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken ||
        node.operatorToken.kind === ts.SyntaxKind.BarBarToken)
    ) {
      evaluate(node.left, path, target, ctx);
      evaluate(node.right, path, target, ctx);
    } else if (
      ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.name) &&
      node.expression.kind !== ts.SyntaxKind.ThisKeyword
    ) {
      evaluate(node.expression, [node.name.text, ...path], target, ctx);
    } else if (head !== undefined && ts.isObjectLiteralExpression(node)) {
      for (const property of node.properties) {
        if (ts.isSpreadAssignment(property)) {
          evaluate(property.expression, path, target, ctx);
          continue;
        }
        if (head !== '*' && propertyName(property.name) !== head) continue;
        if (ts.isPropertyAssignment(property)) evaluate(property.initializer, rest, target, ctx);
        else if (ts.isShorthandPropertyAssignment(property))
          evaluate(property.name, rest, target, ctx);
        else ctx.unresolved(property, rest);
      }
    } else if (head === undefined && ts.isStringLiteralLike(node)) {
      ctx.record(node.text, target, node);
    } else if (head === undefined && ts.isTemplateExpression(node)) {
      for (const text of templateTexts(node, ctx) ?? []) ctx.record(text, target, node);
    } else ctx.unresolved(node, path);
  };

  for (const file of files.values()) {
    const visit = (node: ts.Node): void => {
      if (
        (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
        ts.isIdentifier(node.expression)
      ) {
        const callee = node.expression.text;
        for (const sink of SINKS)
          if (sink.callee === callee && sink.construct === ts.isNewExpression(node))
            atCall(node, sink, main);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return result;
}

/** The server's sources (not its tests), by path from the repository root. */
function serverSources(): Source[] {
  const dir = join(root, 'server', 'src');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => ({
      path: relative(root, join(dir, file)).replace(/\\/g, '/'),
      text: readFileSync(join(dir, file), 'utf8'),
    }));
}

/** The codes the schema declares, each with the file and keyword that declares it. */
function schemaCodes(): Map<string, string> {
  const codes = new Map<string, string>();
  const add = (code: unknown, where: string) => {
    if (typeof code === 'string' && !codes.has(code)) codes.set(code, where);
  };
  const dir = join(root, 'schema');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
    // The meta-schema describes the keywords; it declares no code.
    (file) => file.endsWith('.json') && !file.startsWith('meta'),
  );
  for (const file of files) {
    const at = (keyword: string) => `schema/${file.replace(/\\/g, '/')} ${keyword}`;
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) {
        value.forEach(walk);
        return;
      }
      if (!value || typeof value !== 'object') return;
      const tree = value as Tree;
      const actions = tree['x-actions'] as
        { rules?: Record<string, { code?: unknown }> } | undefined;
      for (const rule of Object.values(actions?.rules ?? {})) add(rule.code, at('x-actions'));
      const constraints = tree['x-constraints'] as Record<string, { code?: unknown }> | undefined;
      for (const rule of Object.values(constraints ?? {})) add(rule.code, at('x-constraints'));
      const xError = tree['x-error'] as Record<string, unknown> | undefined;
      for (const code of Object.values(xError ?? {})) add(code, at('x-error'));
      const ui = tree['x-ui'] as { codes?: unknown } | undefined;
      if (Array.isArray(ui?.codes)) for (const code of ui.codes) add(code, at('x-ui codes'));
      Object.values(tree).forEach(walk);
    };
    walk(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  }
  // A code defaults to the error kind (every kind: kindForStatus maps any status to one).
  const defs = JSON.parse(readFileSync(join(dir, 'common', 'defs.schema.json'), 'utf8')) as {
    $defs: { error: { properties: { error: { enum: string[] } } } };
  };
  for (const kind of defs.$defs.error.properties.error.enum)
    add(kind, 'schema/common/defs.schema.json error kinds');
  return codes;
}

const english = JSON.parse(
  readFileSync(join(root, 'locales', 'en', 'errors.json'), 'utf8'),
) as Tree & { validation?: Tree };

/** One line per code, sorted, with where it comes from; a code found in two places once. */
function listing(what: string, entries: Iterable<[string, string]>): string[] {
  return [...new Map([...entries].reverse())]
    .map(([code, at]) => `${code} (${what} at ${at})`)
    .sort();
}

describe('the collector of server codes', () => {
  const fixture = (files: Record<string, string>) =>
    collectServerCodes(Object.entries(files).map(([path, text]) => ({ path, text })));

  it('reads calls written over several lines, conditionals, defaults and kinds', () => {
    const found = fixture({
      'a.ts': [
        'throw new ApiError(',
        "  'conflict',",
        "  'Taken',",
        "  kind === 'desktop' ? 'desktop_taken' : 'template_taken',",
        '  null,',
        "  { errors: { ['/name']: 'name_taken' } },",
        ');',
        "reply.send(errorBody('not_found', `Route ${url}`));",
        "reply.send(errorBody('bad_request', 'x', given ?? 'bad_body', null, map));",
        "const code = 'from_const';",
        "new ApiError('forbidden', 'No', code);",
      ].join('\n'),
    });
    expect([...found.codes.keys()].sort()).toEqual([
      'bad_body',
      'desktop_taken',
      'from_const',
      'not_found',
      'template_taken',
    ]);
    expect([...found.fieldCodes.keys()]).toEqual(['name_taken']);
    // `given` in the third call is declared nowhere, `map` (whose values are field codes) neither.
    expect([...found.unresolved.keys()].sort()).toEqual(['a.ts: given', 'a.ts: map.*']);
  });

  it('follows helpers through their calls, across imports and re-exports', () => {
    const found = fixture({
      'lib/errors.ts': [
        'export const exceeded = (code: string, limit: number) =>',
        "  new ApiError('precondition_required', `Quota exceeded: ${code}`, code, { limit });",
        'export function tooMany(options: { code?: string }) {',
        "  return new ApiError('too_many_requests', 'Wait', options.code ?? 'too_many_requests');",
        '}',
        "export const notFound = (what: string, code = 'not_found') =>",
        "  new ApiError('not_found', `${what} not found`, code);",
        'export function cannot(verb: string) {',
        "  throw new ApiError('precondition_required', 'No', `unable_to_${verb}_desktop`);",
        '}',
      ].join('\n'),
      'lib/index.ts': "export { exceeded, tooMany as slowDown } from './errors.ts';",
      'domain/a.ts': [
        "import { exceeded, slowDown } from '../lib/index.ts';",
        "import { notFound, cannot } from '../lib/errors.ts';",
        "exceeded('media_user_quota_exceeded', 3);",
        'exceeded(',
        "  big ? 'size_user_quota_exceeded' : 'size_group_quota_exceeded',",
        '  4,',
        ');',
        "slowDown({ code: 'downloads_limit' });",
        "notFound('Group', 'group_not_found');",
        "cannot('start'); cannot('stop');",
      ].join('\n'),
      'domain/b.ts': "const exceeded = (code: string) => code;\nexceeded('not_a_code');",
    });
    expect([...found.codes.keys()].sort()).toEqual([
      'downloads_limit',
      'group_not_found',
      'media_user_quota_exceeded',
      'not_found',
      'size_group_quota_exceeded',
      'size_user_quota_exceeded',
      'too_many_requests',
      'unable_to_start_desktop',
      'unable_to_stop_desktop',
    ]);
    expect([...found.unresolved.keys()]).toEqual([]);
  });

  it('reports a code it cannot resolve', () => {
    const found = fixture({
      'a.ts': [
        "const rule = rules['edit'];",
        "new ApiError('conflict', 'No', rule.code);",
        "new ApiError('conflict', 'No', codeOf(x));",
        "const unused = (code: string) => new ApiError('conflict', 'No', code);",
      ].join('\n'),
    });
    expect([...found.unresolved.keys()].sort()).toEqual([
      'a.ts: code',
      'a.ts: codeOf(x)',
      "a.ts: rules['edit'].code",
    ]);
  });
});

describe('server error codes', () => {
  const server = collectServerCodes(serverSources());
  const schema = schemaCodes();

  it('finds the codes of the server and of the schema', () => {
    expect(server.codes.size).toBeGreaterThan(100);
    expect(schema.size).toBeGreaterThan(50);
  });

  it('has an English text in errors.json for every code the server sends', () => {
    const lacks = ([code]: [string, string]) =>
      typeof english[code] !== 'string' && !server.codes.has(code);
    const listed = Object.entries(UNRESOLVED).flatMap(([key, entry]) =>
      entry.codes.map((code): [string, string] => [code, key]),
    );
    const missing = [
      ...listing(
        'sent',
        [...server.codes].filter(([code]) => typeof english[code] !== 'string'),
      ),
      ...listing('listed in UNRESOLVED', listed.filter(lacks)),
      ...listing('declared', [...schema].filter(lacks)),
    ];
    expect(missing, `${missing.length} codes without an English text`).toEqual([]);
  });

  it('has an English text for every field code of an errors map', () => {
    const missing = listing(
      'sent',
      [...server.fieldCodes].filter(
        ([code]) =>
          typeof english.validation?.[code] !== 'string' && typeof english[code] !== 'string',
      ),
    );
    expect(missing).toEqual([]);
  });

  /** Named like a refusal by a quota or by a group or category limit. */
  const quotaLike = (code: string) => /quota|_limit_exceeded$/.test(code);

  it('has in the quota catalogue exactly the quota and limit refusals the server sends', () => {
    const sent = new Set([
      ...server.codes.keys(),
      ...Object.values(UNRESOLVED).flatMap((entry) => entry.codes),
      ...schema.keys(),
    ]);
    const catalogue = new Set(quotaCodes);
    expect({
      sentNotInCatalogue: [...sent].filter((code) => quotaLike(code) && !catalogue.has(code)),
      catalogueNotSent: [...catalogue].filter((code) => !sent.has(code)),
    }).toEqual({ sentNotInCatalogue: [], catalogueNotSent: [] });
  });

  it('keeps no text for a quota or limit refusal the server does not send', () => {
    const unsent = Object.keys(english)
      .filter((code) => quotaLike(code) && !quotaCodes.includes(code))
      .sort();
    expect(unsent).toEqual([]);
  });

  it('lists every code expression it cannot resolve, and only those', () => {
    const unlisted = [...server.unresolved]
      .filter(([key]) => !(key in UNRESOLVED))
      .map(([key, at]) => `${key} (at ${at})`);
    const stale = Object.keys(UNRESOLVED).filter((key) => !server.unresolved.has(key));
    expect({ unlisted, stale }).toEqual({ unlisted: [], stale: [] });
  });
});
