/** Reads the API key from `Authorization: Bearer` or `X-API-Key` (contract §1.8). */
import type { FastifyRequest } from 'fastify';
import { parseCredential, type CredentialScope } from '../../domain/api-keys.js';
import type { Credential } from '../../store/store.js';
import type { CredentialsCache } from '../credentials-cache.js';
import { ApiError } from '../errors.js';

/** The credential presented, or null when neither header carries anything. */
export function presentedToken(request: FastifyRequest): string | null {
  const auth = request.headers.authorization?.trim() ?? '';
  const rawKey = request.headers['x-api-key'];
  const apiKey = (Array.isArray(rawKey) ? rawKey.join(',') : rawKey ?? '').trim();
  if (!auth && !apiKey) return null;
  let bearer: string | null = null;
  if (auth) {
    const m = /^bearer[ \t]+(\S+)$/i.exec(auth);
    if (!m) {
      throw new ApiError(
        'unauthorized',
        'The Authorization header must use the Bearer scheme: "Authorization: Bearer <key>".',
      );
    }
    bearer = m[1]!;
  }
  if (bearer && apiKey && bearer !== apiKey) {
    throw new ApiError('unauthorized', 'Authorization and X-API-Key carry different keys. Send one key.');
  }
  return bearer ?? apiKey;
}

export async function authenticate(
  request: FastifyRequest,
  credentials: CredentialsCache,
  scope: CredentialScope,
): Promise<Credential> {
  const token = presentedToken(request);
  if (token === null) throw new ApiError('auth_required');
  const credential = await credentials.verify(token, scope);
  if (!credential) {
    const expired = expiredRefusal(credentials, token, scope);
    if (expired) throw expired;
    // An upload token is the one credential a user may well hold and try here: say what it is.
    if (scope === 'read' && parseCredential(token)?.scope === 'upload') {
      throw new ApiError(
        'unauthorized',
        'This is an upload token (upl_…), not an API key: it only uploads files. Reading /v1 needs an API key (api_…), from the panel or `mirador key create`.',
      );
    }
    throw new ApiError('unauthorized');
  }
  request.credential = credential;
  return credential;
}

/** The 401 for a credential refused because it expired, saying so and when; null when it was refused for another reason. */
export function expiredRefusal(credentials: CredentialsCache, token: string, scope: CredentialScope): ApiError | null {
  const expired = credentials.expiredAt(token, scope);
  if (!expired) return null;
  const what = scope === 'read' ? 'API key' : 'upload token';
  return new ApiError('unauthorized', `The ${what} expired on ${expired.toISOString()}. Create a new one, switch to it, and revoke this one.`);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The credential that authenticated this request, for logs. */
    credential?: Credential;
  }
}
