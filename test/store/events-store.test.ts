// Events and webhook deliveries in the store (issue 19), once per available store.
import { storeFactories } from '../helpers/stores.js';
import { eventsSuite } from '../suites/events-suite.js';

for (const factory of await storeFactories()) eventsSuite(factory);
