// Re-imports share unchanged chunks with the snapshot before them, once per available store.
import { storeFactories } from '../helpers/stores.js';
import { chunkSharingSuite } from '../suites/chunk-sharing-suite.js';

for (const factory of await storeFactories()) chunkSharingSuite(factory);
