/** Validation of a webhook endpoint's URL when it is created (panel, CLI). */
import { checkLiteralHost, UnsafeDestinationError } from './safe-address.js';

export class InvalidEndpointUrlError extends Error {}

const MAX_URL_LENGTH = 2048;

/**
 * The URL, normalised, or an InvalidEndpointUrlError saying why not. Only
 * https (unless `allowHttp`), no user name or password in it (they would be
 * shown in lists), and no address literal that the delivery would refuse.
 * A name is resolved only when a delivery connects (safe-address.ts).
 */
export function checkEndpointUrl(raw: string, rules: { allowHttp: boolean; allowPrivate: boolean }): string {
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_URL_LENGTH) throw new InvalidEndpointUrlError(`The URL must have 1 to ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidEndpointUrlError(`"${text.slice(0, 200)}" is not an absolute URL, such as https://example.com/webhooks/mirador.`);
  }
  if (url.protocol !== 'https:' && !(rules.allowHttp && url.protocol === 'http:')) {
    throw new InvalidEndpointUrlError(
      rules.allowHttp ? 'The URL must start with https:// or http://.' : 'The URL must start with https:// (set WEBHOOK_ALLOW_HTTP=true to allow http://).',
    );
  }
  if (url.username || url.password) throw new InvalidEndpointUrlError('The URL must not carry a user name or password.');
  try {
    checkLiteralHost(url.hostname, rules.allowPrivate);
  } catch (err) {
    if (err instanceof UnsafeDestinationError) throw new InvalidEndpointUrlError(err.message);
    throw err;
  }
  return url.toString();
}
