// Issue 9's suite, once per available store.
import { syncSuite } from '../suites/sync-suite.js';
import { storeFactories } from '../helpers/stores.js';

for (const factory of await storeFactories()) syncSuite(factory);
