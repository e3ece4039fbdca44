// Issue 17's suite (filters, q, fields, related records), once per available store.
import { subsetSuite } from '../suites/subset-suite.js';
import { storeFactories } from '../helpers/stores.js';

for (const factory of await storeFactories()) subsetSuite(factory);
