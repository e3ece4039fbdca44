// Gzip uploads through the panel and the token API, once per available store.
import { storeFactories } from '../helpers/stores.js';
import { compressedUploadSuite } from '../suites/compressed-upload-suite.js';

for (const factory of await storeFactories()) compressedUploadSuite(factory);
