// A re-import that changes nothing keeps the live snapshot, once per available store.
import { unchangedImportSuite } from '../suites/unchanged-import-suite.js';
import { storeFactories } from '../helpers/stores.js';

for (const factory of await storeFactories()) unchangedImportSuite(factory);
