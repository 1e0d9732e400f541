/**
 * The layering of src/, checked in CI (`npm run lint:deps`). A folder imports only from its own layer and the
 * layers below it, never in a cycle; every folder of src/ is in exactly one layer. README's "Architecture"
 * section shows the same table.
 */
const LAYERS = [
  // Within ground: common imports nothing else of the service, config only common, database both (rules below).
  { name: 'ground', folders: ['common', 'config', 'database'] },
  { name: 'platform', folders: ['redis', 'invalidation', 'metrics', 'health', 'logging', 'http', 'rate-limit', 'outbox', 'mail'] },
  { name: 'identity', folders: ['auth'] },
  { name: 'tenants', folders: ['organizations', 'own-organizations', 'people', 'quota'] },
  { name: 'features', folders: ['audit', 'events', 'flags', 'flag-config', 'storage', 'review', 'change-requests', 'webhooks'] },
  { name: 'edge', folders: ['app', 'cli', 'console'] },
];

const under = (folders) => `^src/(${folders.join('|')})/`;
const ENTRY_POINTS = '^src/(main|cli|openapi)\\.ts$';

const upward = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `${layer.name}-imports-upward`,
  comment: `${layer.name} (${layer.folders.join(', ')}) may import only from its own layer and those below it`,
  severity: 'error',
  // Specs exercise their folder with whatever it serves (a poll test uses the key cache): they are not layered.
  from: { path: under(layer.folders), pathNot: '\\.spec\\.ts$' },
  to: { path: `${under(LAYERS.slice(index + 1).flatMap((above) => above.folders))}|${ENTRY_POINTS}` },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'config-imports-only-common',
      comment: "within the ground layer, config reads the environment with common's helpers only (database builds on both)",
      severity: 'error',
      from: { path: '^src/(common|config)/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(common|config)/' },
    },
    {
      name: 'common-is-the-kernel',
      comment: 'common holds what every layer shares and imports nothing else of the service',
      severity: 'error',
      from: { path: '^src/common/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/', pathNot: '^src/common/' },
    },
    {
      name: 'folder-without-layer',
      comment: 'every folder of src/ belongs to a layer: add a new one to LAYERS in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: `${under(LAYERS.flatMap((layer) => layer.folders))}|${ENTRY_POINTS}` },
      to: {},
    },
    {
      name: 'import-of-folder-without-layer',
      comment: 'every folder of src/ belongs to a layer: add a new one to LAYERS in .dependency-cruiser.cjs',
      severity: 'error',
      from: {},
      to: { path: '^src/', pathNot: `${under(LAYERS.flatMap((layer) => layer.folders))}|${ENTRY_POINTS}` },
    },
    {
      name: 'no-circular',
      comment: 'modules that import each other cannot be understood, tested or moved apart',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'sdk-speaks-http-only',
      comment: 'the SDK ships alone: it imports nothing from the service',
      severity: 'error',
      from: { path: '^sdk/src/' },
      to: { path: '^src/' },
    },
    {
      name: 'production-code-imports-no-tests',
      comment: 'test fakes and helpers live in test/; production code never imports them',
      severity: 'error',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
