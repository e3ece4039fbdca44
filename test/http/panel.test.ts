// The panel's HTTP suites, once per available store.
import { storeFactories } from '../helpers/stores.js';
import { panelAuthSuite } from '../suites/panel-auth-suite.js';
import { panelDataSuite } from '../suites/panel-data-suite.js';
import { panelIsolationSuite } from '../suites/panel-isolation-suite.js';

for (const factory of await storeFactories()) {
  panelAuthSuite(factory);
  panelDataSuite(factory);
  panelIsolationSuite(factory);
}
