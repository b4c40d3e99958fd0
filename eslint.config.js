// ESLint for the whole tree: typescript-eslint's recommended rules, no explicit `any`, no unused
// variables, and a line length. Formatting itself is Prettier's (npm run format:check); unused
// exports are knip's (npm run lint runs both).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Prettier wraps code at 140; what it cannot wrap (a long string, a URL, a regex) may run on
      'max-len': ['error', { code: 160, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    // scripts the browser runs, served as they are from the hosted pages and the portal
    files: ['src/http/**/assets/*.js'],
    languageOptions: { globals: { ...globals.browser }, sourceType: 'script' },
  },
);
