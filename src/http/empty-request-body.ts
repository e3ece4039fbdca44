/**
 * A request without a body skips node's Readable life cycle.
 *
 * Node 20 runs every request through it, body or none: when the response
 * finishes, the server "dumps" the unread request (resume, flow, end,
 * destroy, close), which takes ten `process.nextTick`s a request. Each costs
 * ~4,000 instructions in V8 11, whose tick object has computed symbol keys
 * that go through the runtime's slow path: a fifth of a warm detail's
 * instructions (performance.md, "Node's dump of a bodiless request").
 *
 * Newer versions of node do what this does behind their
 * `optimizeEmptyRequests` server option: a request whose head has neither
 * Content-Length nor Transfer-Encoding has no body (RFC 9112, section 6.3),
 * so it is put at once in the state the life cycle would have left it in:
 * dumped, ended, destroyed and closed. It then never emits 'data', 'end' or
 * 'close'. Nothing in Mirador listens for those on a request; Fastify does
 * only for `request.signal` and onRequestAbort hooks, which Mirador does not
 * use. A request with a body is left alone, to be read or drained as before.
 */
import type { IncomingMessage } from 'node:http';

/** The fields of node's IncomingMessage and its ReadableState this sets (node 20; its own method where node has one). */
interface Dumpable {
  _dumped?: boolean;
  _dumpAndCloseReadable?: () => void;
  _readableState?: { ended: boolean; endEmitted: boolean; destroyed: boolean; closed: boolean; closeEmitted: boolean };
}

/** Whether the request's head says it has no body. */
function hasNoBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
}

/**
 * Puts a request without a body in its finished state, as node's
 * `optimizeEmptyRequests` does; true when it did. Called before the response
 * is written (from the first hook), so the server finds it dumped when the
 * response finishes. A request with a body, or an object that is not the
 * IncomingMessage this knows, is left alone (false).
 */
export function skipEmptyBodyLifeCycle(req: IncomingMessage): boolean {
  if (!hasNoBody(req)) return false;
  const message = req as IncomingMessage & Dumpable;
  if (typeof message._dumpAndCloseReadable === 'function') {
    message._dumpAndCloseReadable();
    return true;
  }
  const state = message._readableState;
  // `_dumped` is set by the constructor: without it this is not node's IncomingMessage.
  if (message._dumped !== false || !state || state.ended) return false;
  message._dumped = true;
  state.ended = true;
  state.endEmitted = true;
  state.destroyed = true;
  state.closed = true;
  state.closeEmitted = true;
  return true;
}
