// The Store contract suites, once per available store.
import { storeFactories } from '../helpers/stores.js';
import { storeAuditSuite } from '../suites/store-audit-suite.js';
import { storeQueueSuite } from '../suites/store-queue-suite.js';
import { storeSuite } from '../suites/store-suite.js';

for (const factory of await storeFactories()) {
  storeSuite(factory);
  storeQueueSuite(factory);
  storeAuditSuite(factory);
}
