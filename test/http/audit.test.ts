// The audit trail through the panel and the upload-token API, once per available store.
import { storeFactories } from '../helpers/stores.js';
import { auditSuite } from '../suites/audit-suite.js';

for (const factory of await storeFactories()) auditSuite(factory);
