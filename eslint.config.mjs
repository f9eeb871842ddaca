// ESLint with typescript-eslint, type-aware (`npm run lint`, part of `npm test`).
// The TypeScript sources are linted with the type information of their own tsconfig: the host,
// CLI, SDK and tests with ./tsconfig.json, the webview (and its tests) with webview/tsconfig.json.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "build/**",
      "node_modules/**",
      "test/e2e/code-server/**",
      "test/fixtures/**",
      "test/e2e/.cache/**",
      "bench/.cache/**",
      "**/*.js",
      "**/*.cjs",
      "**/*.mjs",
      "**/*.mts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parserOptions: {
        project: ["./tsconfig.json", "./webview/tsconfig.json"],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // Run folders, blobs and requests are untyped JSON: the code narrows them where it reads
      // them, and these rules would flag every access of a parsed value (thousands of findings
      // that a cast to a written-out type would only hide).
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      // `any` is allowed where a value is parsed JSON of an open format (a test record, a tool's
      // arguments); it is rare and reviewed.
      "@typescript-eslint/no-explicit-any": "off",
      // String(x) and `${x}` of a field read from a run or a request are how a value of an open
      // format is shown; a value that is an object shows as such on purpose rather than failing.
      "@typescript-eslint/no-base-to-string": "off",
      "@typescript-eslint/restrict-template-expressions": "off",
      // unused variables are errors, except those named `_…` (positional parameters kept for a signature)
      // a store or a client implements an async interface whether or not its own body awaits
      "@typescript-eslint/require-await": "off",
      // a first value kept for clarity and later overwritten is not a defect worth a finding
      "no-useless-assignment": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // the coefficients of published approximations, written as published (more digits than a
    // double holds; the nearest double is what is meant)
    files: ["core/stats/normal.ts", "core/stats/exact-tests.ts"],
    rules: { "no-loss-of-precision": "off" },
  },
  {
    // the preload wraps methods of third-party clients: the wrapper needs the original `this`
    files: ["core/register/**/*.ts"],
    rules: { "@typescript-eslint/no-this-alias": "off" },
  },
  {
    // the gateway refuses control characters in a path: its regular expressions name them on purpose
    files: ["core/capture/gateway.ts"],
    rules: { "no-control-regex": "off" },
  },
  {
    // the engine, the host's vscode-free logic and the webview run outside the extension host (the
    // CLI, the tests, a browser): the VS Code API stays in extension/ outside extension/logic/
    files: ["core/**/*.ts", "extension/logic/**/*.ts", "webview/**/*.ts", "webview/**/*.tsx"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "vscode", message: "core/, extension/logic/ and webview/ run outside VS Code: take what you need from the host through an interface" },
          ],
        },
      ],
    },
  },
);
