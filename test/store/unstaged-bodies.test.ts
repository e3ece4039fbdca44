// Re-imports stage only the bodies of new and changed records, once per available store.
import { storeFactories } from '../helpers/stores.js';
import { unstagedBodiesSuite } from '../suites/unstaged-bodies-suite.js';

for (const factory of await storeFactories()) unstagedBodiesSuite(factory);
