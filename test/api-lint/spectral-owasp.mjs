// The OWASP API Security Top 10 (2023) ruleset for Spectral, for /openapi.json
// (test/http/openapi-tools.test.ts). Any finding, error or warning, fails the test. Changed, each for
// its reason:
import owasp from '@stoplight/spectral-owasp-ruleset';
import { length, truthy } from '@stoplight/spectral-functions';

const rule = (name) => owasp.rules[name];
// Operations other than HEAD: HEAD answers have no body by definition (RFC 9110, 9.3.2).
const WITH_BODIES = "[?(@property != 'head')]";
// Paths that need a key: the sandbox (/v1/sandbox/…) is public by design (contract §1.1).
const KEYED = '[?(!@property.match(/^\\/v1\\/sandbox\\//))]';

export default {
  extends: [owasp],
  rules: {
    // Off: it asks every string for a format, pattern or enum. ERP text (names, addresses, remarks,
    // every `data` cell) and messages are free text; every string is bounded (string-limit stays on).
    'owasp:api4:2023-string-restricted': 'off',

    // Narrowed to keyed paths: the sandbox needs no key, so it has no security and no 401.
    'owasp:api2:2023-read-restricted': {
      ...rule('owasp:api2:2023-read-restricted'),
      given: `$.paths${KEYED}[get,head]`,
      then: { field: 'security', function: length, functionOptions: { min: 1 } },
    },
    'owasp:api8:2023-define-error-responses-401': {
      ...rule('owasp:api8:2023-define-error-responses-401'),
      given: `$.paths${KEYED}${WITH_BODIES}.responses`,
      then: [
        { field: '401', function: truthy },
        { field: '401.content', function: truthy },
      ],
    },

    // Narrowed to operations with bodies: a HEAD's 429 and 500 are documented, without content.
    'owasp:api4:2023-rate-limit-responses-429': {
      ...rule('owasp:api4:2023-rate-limit-responses-429'),
      given: `$.paths[*]${WITH_BODIES}.responses`,
    },
    'owasp:api8:2023-define-error-responses-500': {
      ...rule('owasp:api8:2023-define-error-responses-500'),
      given: `$.paths[*]${WITH_BODIES}.responses`,
    },
  },
};
