// The import suite, once per available store.
import { importSuite } from '../suites/import-suite.js';
import { storeFactories } from '../helpers/stores.js';

for (const factory of await storeFactories()) importSuite(factory);
