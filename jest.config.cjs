// One jest config for the whole workspace. The test tier is in the file name
// (*.unit.spec.ts, *.int.spec.ts, *.e2e.spec.ts); scripts/run-tests.sh picks tiers.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // Resolve @weft/* packages to their TypeScript sources, so tests need no build.
  testEnvironmentOptions: { customExportConditions: ['weft-source', 'node', 'require', 'default'] },
  roots: ['<rootDir>/contracts', '<rootDir>/libs', '<rootDir>/services'],
  testMatch: ['**/test/**/*.spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  // Sources import siblings as './x.js' (NodeNext); jest resolves the .ts file.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2023',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  // Generous: stores and servers start slowly on a loaded 2-core machine; no test asserts on time.
  testTimeout: 60000,
  // Three workers on the 2-core CI machine: most int and e2e suites wait on databases, servers and
  // child processes, not on the CPU. CI took 22-28 min with two (jest's default here is one)
  // and 10 min with three (1,686 suite-seconds in 570 s; tools already installed), green.
  maxWorkers: 3,
  // One deployment shared by the e2e suites that need plain Weft (services/all-in-one/test/support/shared-deployment.ts).
  globalSetup: '<rootDir>/services/all-in-one/test/support/shared-deployment-setup.ts',
  globalTeardown: '<rootDir>/services/all-in-one/test/support/shared-deployment-teardown.ts',
};
