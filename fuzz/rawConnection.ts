/**
 * A WebSocket client on a bare TCP socket: it performs a proper upgrade with the token, then writes whatever bytes
 * the fuzzer hands it and records everything the server sends back — decoded protocol messages (each checked against
 * protocol.json), pongs, the close frame's code, the end of the TCP stream.
 * It also watches the raw bytes it receives for the token: the server must never echo it.
 */
import { connect, type Socket } from 'node:net';
import { decodeMessage } from '../shared-schema/codec.js';
import { validateServerMessage } from '../shared-schema/validate.js';
import { closeFrame, expectedAccept, OPCODE, responseStatus, ServerFrameReader, upgradeRequest, DEFAULT_KEY, type UpgradeRequestSpec } from './wsWire.js';

export type Message = Record<string, unknown>;

/** How a connection ended: the server's close code (1005: a close frame without a code), or 'eof' (no close frame). */
export type CloseOutcome = number | 'eof';

/** Something the server did, in arrival order. `at` is performance.now() at arrival. */
export type ServerEvent =
  | { type: 'message'; message: Message; at: number }
  | { type: 'pong'; payload: Buffer; at: number }
  | { type: 'close'; outcome: CloseOutcome; at: number };

/** Scans a byte stream for one secret, across chunk boundaries. */
export class SecretWatch {
  private tail = Buffer.alloc(0);
  sightings = 0;
  private readonly secret: Buffer;

  constructor(secret: string) {
    this.secret = Buffer.from(secret, 'utf8');
  }

  /** Look at the next chunk of the stream. */
  scan(chunk: Buffer): void {
    const window = Buffer.concat([this.tail, chunk]);
    let from = 0;
    for (;;) {
      const at = window.indexOf(this.secret, from);
      if (at < 0) break;
      this.sightings++;
      from = at + 1;
    }
    this.tail = window.subarray(Math.max(0, window.length - (this.secret.length - 1)));
  }
}

/** Open a TCP connection to 127.0.0.1:port. Resolves once connected (Nagle off: each write is its own segment). */
export function connectTcp(port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setNoDelay(true);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TCP connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** An upgraded connection, recording the server's events. */
export class RawConnection {
  readonly events: ServerEvent[] = [];
  /** Messages that broke protocol.json or the framing rules (the server's fault). */
  readonly violations: string[] = [];
  closed = false;
  private readonly reader = new ServerFrameReader();
  private wake: Array<() => void> = [];
  private sentClose = false;

  private constructor(
    readonly socket: Socket,
    private readonly watch: SecretWatch,
  ) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => {}); // a reset by either side just ends the connection; 'close' follows
    socket.on('close', () => {
      if (!this.events.some((e) => e.type === 'close')) this.events.push({ type: 'close', outcome: 'eof', at: performance.now() });
      this.closed = true;
      this.notify();
    });
  }

  /**
   * Connect and upgrade with a valid request carrying `token`. Rejects when the server does not answer 101 with the
   * right Sec-WebSocket-Accept. `watch` sees every byte received, the handshake answer included.
   */
  static async open(port: number, token: string, watch: SecretWatch, timeoutMs = 5000): Promise<RawConnection> {
    const socket = await connectTcp(port, timeoutMs);
    const spec: UpgradeRequestSpec = { host: `127.0.0.1:${port}`, token };
    const { head, rest } = await readResponseHead(socket, upgradeRequest(spec), watch, timeoutMs);
    const status = responseStatus(head);
    const accept = /\r\nsec-websocket-accept: *([^\r]*)/i.exec(head)?.[1];
    if (status !== 101 || accept !== expectedAccept(DEFAULT_KEY)) {
      socket.destroy();
      throw new Error(`upgrade refused: ${head.split('\r\n')[0]}`);
    }
    const connection = new RawConnection(socket, watch);
    if (rest.length > 0) connection.receive(rest);
    return connection;
  }

  /** Write bytes as they are. */
  write(bytes: Uint8Array): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Half-close: no more bytes from us (the server sees the end of its input). */
  end(): void {
    if (!this.socket.destroyed) this.socket.end();
  }

  /** Abort with a TCP reset, as a crashed client would. */
  reset(): void {
    if (!this.socket.destroyed) this.socket.resetAndDestroy();
  }

  /** Close at once without a handshake (after the case is over). */
  destroy(): void {
    this.socket.destroy();
  }

  /**
   * Wait until `done(events)` holds or the connection closes; false when `timeoutMs` passed first.
   * `done` is re-checked after every event.
   */
  async waitFor(done: (events: ServerEvent[]) => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (done(this.events)) return true;
      if (this.closed) return done(this.events);
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private notify(): void {
    for (const wake of this.wake.splice(0)) wake();
  }

  private receive(chunk: Buffer): void {
    this.watch.scan(chunk);
    let frames;
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      this.violations.push((err as Error).message);
      this.socket.destroy();
      return;
    }
    for (const frame of frames) this.handleFrame(frame.opcode, frame.fin, frame.payload, frame.malformed);
    this.notify();
  }

  private handleFrame(opcode: number, fin: boolean, payload: Buffer, malformed: boolean): void {
    const at = performance.now();
    if (malformed || !fin) this.violations.push(`the server sent a ${malformed ? 'malformed' : 'fragmented'} frame (opcode ${opcode})`);
    switch (opcode) {
      case OPCODE.binary:
        try {
          const message = decodeMessage(payload);
          validateServerMessage(message);
          this.events.push({ type: 'message', message, at });
        } catch (err) {
          this.violations.push(`a reply that breaks protocol.json: ${(err as Error).message}`);
        }
        return;
      case OPCODE.pong:
        this.events.push({ type: 'pong', payload, at });
        return;
      case OPCODE.close: {
        const outcome = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        this.events.push({ type: 'close', outcome, at });
        // Finish the closing handshake as a polite client does, then stop writing.
        if (!this.sentClose && !this.socket.destroyed) {
          this.sentClose = true;
          this.socket.end(closeFrame(outcome === 1005 ? undefined : 1000));
        }
        return;
      }
      default:
        this.violations.push(`the server sent opcode ${opcode}`);
    }
  }
}

/**
 * Write `request` and read the HTTP response head (up to the blank line). Resolves with the head text and any bytes
 * after it; a connection that closes first resolves with what came (possibly nothing).
 */
export function readResponseHead(socket: Socket, request: string | Uint8Array, watch: SecretWatch, timeoutMs: number): Promise<{ head: string; rest: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      const end = received.indexOf('\r\n\r\n');
      const head = end >= 0 ? received.subarray(0, end).toString('latin1') : received.toString('latin1');
      resolve({ head, rest: end >= 0 ? received.subarray(end + 4) : Buffer.alloc(0), closed });
    };
    const onData = (chunk: Buffer) => {
      watch.scan(chunk);
      received = Buffer.concat([received, chunk]);
      if (received.indexOf('\r\n\r\n') >= 0) finish(false);
    };
    const onClose = () => finish(true);
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.on('error', () => {});
    socket.write(request);
  });
}
