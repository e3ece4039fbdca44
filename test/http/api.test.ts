// The API contract suites, once per available store.
import { apiHttpSuite } from '../suites/api-http-suite.js';
import { gzipPagesSuite } from '../suites/gzip-pages-suite.js';
import { apiReadSuite } from '../suites/api-read-suite.js';
import { storeFactories } from '../helpers/stores.js';

for (const factory of await storeFactories()) {
  apiReadSuite(factory);
  apiHttpSuite(factory);
  gzipPagesSuite(factory);
}
