'use strict';
/**
 * The memory the API key index (src/auth/api-key-index.ts) takes per key: `npm run build`, then
 * `node --expose-gc bench/key-index-memory.js [keys]` (default 100,000). The keys are handed over as the change
 * feed hands them (parsed from one JSON array), with 1,000 organizations and one permission list; the figure is the
 * heap the index holds once garbage is collected.
 */
const { createHash, randomUUID } = require('node:crypto');
const { ApiKeyIndex } = require('../dist/auth/api-key-index');

if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
const count = Number(process.argv[2] ?? 100_000);
const organizations = Array.from({ length: 1_000 }, () => randomUUID());
const collect = () => {
  for (let pass = 0; pass < 4; pass += 1) global.gc();
};
const json = JSON.stringify(
  Array.from({ length: count }, (_, index) => ({
    id: randomUUID(),
    organizationId: organizations[index % organizations.length],
    keyHash: createHash('sha256').update(`key-${index}`).digest('hex'),
    permissions: ['FLAGS_READ', 'FLAGS_WRITE'],
    live: true,
  })),
);
const index = new ApiKeyIndex();
collect();
const before = process.memoryUsage().heapUsed;
index.replaceAll(JSON.parse(json));
collect();
const bytes = process.memoryUsage().heapUsed - before;
process.stdout.write(`API key index: ${index.size} keys in ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${Math.round(bytes / count)} bytes per key\n`);
