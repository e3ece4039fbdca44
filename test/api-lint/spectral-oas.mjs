// Spectral's own OpenAPI ruleset, for /openapi.json (test/http/openapi-tools.test.ts). All of it, not
// only the recommended rules; any finding fails the test. Turned off, each for its reason:
import { oas } from '@stoplight/spectral-rulesets';

export default {
  extends: [[oas, 'all']],
  rules: {
    // The contact is "the administrators of this Mirador server", reached through its panel: Mirador
    // has no e-mail address of theirs to publish (no configuration variable holds one).
    'contact-properties': 'off',
    // Tags are in the order the docs page should show them (the kinds as the contract lists them, then
    // estado), not alphabetical.
    'openapi-tags-alphabetical': 'off',
  },
};
