import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { OWN_PROCESS, SHARED_FOLDERS } from './test/processes.ts';

const globals = {
  process: 'readonly',
  console: 'readonly',
  Buffer: 'readonly',
  URL: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
  setInterval: 'readonly',
  clearInterval: 'readonly',
  setImmediate: 'readonly',
  AbortController: 'readonly',
  AbortSignal: 'readonly',
  fetch: 'readonly',
  performance: 'readonly',
  structuredClone: 'readonly',
  TextEncoder: 'readonly',
  TextDecoder: 'readonly',
};

// ESLint keeps one no-restricted-syntax list per file (a later block replaces an earlier one), so
// the blocks that set it share this entry.
const ONLY_WRITE_OPENS_TRANSACTIONS = {
  selector: 'CallExpression[callee.property.name=/^(transaction|startTransaction)$/]',
  message: 'Open a transaction with write() from src/db/index.ts: its Tx carries what the database layer keeps for it (docs/architecture.md §Database layer).',
};
const NO_TOP_LEVEL_AWAIT = {
  selector:
    ':matches(Program > ExpressionStatement > AwaitExpression, Program > VariableDeclaration > VariableDeclarator > AwaitExpression, Program > ForOfStatement[await=true], Program > ForOfStatement > AwaitExpression)',
  message:
    'No top-level await in a test file: register every suite synchronously and do asynchronous set-up in a before hook (docs/architecture.md §Writing a test file).',
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  // Type-aware: the rules that need the types (floating promises, awaits of non-promises, unsafe
  // `any`, needless assertions…) run against tsconfig.json.
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { globals, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'always' }],
      // Fastify plugins and interface methods are async by contract, whether or not they await.
      '@typescript-eslint/require-await': 'off',
      // node:test's test() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
    },
  },
  {
    // Tests, benchmarks and the conformance check read JSON responses, which are `any` by nature.
    files: ['test/**', 'bench/**', 'scripts/conformance*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Every transaction is opened by write() (src/db/write.ts): its Tx carries what the database
    // layer keeps for it (docs/architecture.md §Database layer).
    files: ['**/*.ts'],
    ignores: ['src/db/write.ts'],
    rules: {
      'no-restricted-syntax': ['error', ONLY_WRITE_OPENS_TRANSACTIONS],
    },
  },
  {
    // A test file registers every suite synchronously: node:test runs the file's root `after`
    // hooks once the tests registered so far are done, so a suite registered after a top-level
    // await can start after them (docs/architecture.md §Writing a test file).
    files: ['test/**/*.test.ts'],
    rules: {
      'no-restricted-syntax': ['error', ONLY_WRITE_OPENS_TRANSACTIONS, NO_TOP_LEVEL_AWAIT],
    },
  },
  {
    // A file that shares its process with others leaves it as it found it: root-level hooks would
    // last as long as the whole group, and a module changed at the top level would be changed for
    // the other files too (docs/architecture.md §Writing a test file).
    files: SHARED_FOLDERS.map((d) => `${d}**/*.test.ts`),
    ignores: OWN_PROCESS,
    rules: {
      'no-restricted-syntax': [
        'error',
        ONLY_WRITE_OPENS_TRANSACTIONS,
        NO_TOP_LEVEL_AWAIT,
        {
          selector: 'Program > ExpressionStatement > CallExpression[callee.name=/^(before|after|beforeEach|afterEach)$/]',
          message:
            'No root-level hook in a file that shares its process: put it in the suite (or the file in OWN_PROCESS, test/processes.ts, with the reason).',
        },
        {
          selector:
            ':matches(Program > ExpressionStatement > AssignmentExpression, Program > ExpressionStatement > CallExpression[callee.name=/^set[A-Z]/], Program > ExpressionStatement > CallExpression[callee.property.name="assign"])',
          message:
            "No change to a module at a test file's top level: another file of its process would run with it. Make it in the suite's before hook and undo it in its after hook (test/helpers/settings.ts).",
        },
      ],
    },
  },
  // Plain JavaScript (this file, the bin shim, the dependency rules) has no types to check.
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
