// The panel's guard page (a held import's decision), once per available store.
import { storeFactories } from '../helpers/stores.js';
import { panelGuardSuite } from '../suites/panel-guard-suite.js';

for (const factory of await storeFactories()) panelGuardSuite(factory);
