/**
 * Who may talk to the sidecar: a process on this machine that knows the token. The checks run on the HTTP upgrade
 * request, before any WebSocket exists.
 * - Host must name the loopback interface: a web page that rebinds a DNS name to 127.0.0.1 still sends its own name.
 * - Origin, when present, must be a loopback page: browsers always send it, the Blender add-on never does.
 * - Authorization: Bearer <token>, compared in constant time (both sides hashed first so lengths leak nothing either).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The loopback names a client may use, with an optional port. */
const loopbackAuthority = /^(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$/i;
const loopbackOrigin = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$/i;

/** Refusal of an upgrade: the HTTP status and a short reason (never containing the token or any request text). */
export interface Refusal {
  status: 401 | 403 | 404;
  reason: string;
}

/** True when a Host header value names the loopback interface (127.0.0.1, localhost or [::1], any port). */
export function isLoopbackHost(host: string | undefined): boolean {
  return host !== undefined && loopbackAuthority.test(host.trim());
}

/** True when an Origin header value is a page served from the loopback interface. */
export function isLoopbackOrigin(origin: string): boolean {
  return loopbackOrigin.test(origin.trim());
}

/** True when an Authorization header carries `Bearer <token>` for exactly this token. */
export function bearerTokenMatches(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  const offered = createHash('sha256').update(match ? match[1] : '').digest();
  const expected = createHash('sha256').update(token).digest();
  // Compare even when the header is malformed, so that timing does not tell a malformed header from a wrong token.
  return timingSafeEqual(offered, expected) && match !== null;
}

/**
 * Check an upgrade request. Returns null when it may proceed, else the refusal to answer with.
 * Host and Origin first (403: wrong place, whatever the token), then the path, then the token (401).
 */
export function checkUpgrade(request: IncomingMessage, token: string): Refusal | null {
  if (!isLoopbackHost(request.headers.host)) return { status: 403, reason: 'Host must be a loopback address' };
  const origin = request.headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin)) return { status: 403, reason: 'foreign Origin' };
  const path = (request.url ?? '/').split('?')[0];
  // The path is not echoed: it is the client's text, logged before the token check (a client that put its token in
  // the URL would see it in the log).
  if (path !== '/') return { status: 404, reason: 'no endpoint at this path: the sidecar serves /' };
  if (!bearerTokenMatches(request.headers.authorization, token)) return { status: 401, reason: 'missing or wrong bearer token' };
  return null;
}
