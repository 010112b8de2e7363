/**
 * The sidecar's WebSocket server: loopback only, token-guarded, one msgpack map per binary message.
 *
 * Oversized messages: ws itself closes a connection with 1009 when a message passes its maxPayload, without a word
 * the client could show. So ws's cap is set a quarter above limits.maxMessageBytes and the size is checked here:
 * a message between the limit and that hard cap is answered with error TOO_LARGE and the connection keeps serving;
 * only a message beyond the hard cap closes that one connection (1009). The server keeps accepting connections either way.
 */
import { existsSync } from 'node:fs';
import { selectProvider } from '../learned/onnxSession.js';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { protocolLimits, type Limits } from '../../shared-schema/validate.js';
import { checkUpgrade } from './auth.js';
import { serveConnection, type Connection, type Log } from './connection.js';
import { defaultJobSlots, JobQueue } from './jobs.js';
import { MODEL_FILES, modelPath, type ModelName } from '../learned/modelFiles.js';
import { modelsRunBy } from '../methods.js';
import { ModelHost } from './modelHost.js';
import { PoseReuseCache } from './poseReuseCache.js';
import { warmJobThread, type WarmUp, type WarmUpReport } from './warmJobThread.js';

export interface ServeOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one (read it back from the result). */
  port: number;
  /** The shared secret clients send as `Authorization: Bearer <token>`. Required; never logged. */
  token: string;
  /** Where to write one-line notes (connections, jobs, refusals). Default: nowhere. */
  log?: Log;
  /** Lower limits than protocol.json's (tests use a small maxMessageBytes). */
  limits?: Partial<Limits>;
  /** How many jobs may run at once, all clients together; more wait their turn. Default: one per core, at most 4. */
  jobSlots?: number;
  /**
   * Load every installed model into the model host now (in the background), so that the first request does not wait for them. Default false (tests start many servers); `autorig serve` sets it.
   */
  warmModels?: boolean;
  /**
   * Warm one job thread in the background by posing the demo character (warmJobThread), so that the first request of
   * a session does not compile the pipeline. Default false; `autorig serve` sets it.
   */
  warmJobs?: boolean;
}

export interface RunningServer {
  /** The port actually bound. */
  port: number;
  /** The thread that holds the sidecar's model sessions (started by the first job that runs a model, or by warming). */
  models: ModelHost;
  /** The start-up warm-up of a job thread (warmJobs), resolved once it has ended; null when not asked for. */
  warmUp: Promise<WarmUpReport> | null;
  /** Stop: cancel all jobs, close all connections (1001), stop listening, end the model host. Resolves when everything is closed. */
  close(): Promise<void>;
}

/** How much past limits.maxMessageBytes a message may be and still get a TOO_LARGE answer (see the module comment). */
export function hardMessageCap(limits: Limits): number {
  return Math.floor(limits.maxMessageBytes * 1.25);
}

/** Milliseconds a closing client gets to answer the close handshake before its socket is cut. */
const CLOSE_GRACE_MS = 1000;

const statusText: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 426: 'Upgrade Required' };

/** Answer an upgrade request with an HTTP error and drop the socket. */
function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${statusText[status]}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Start the server on 127.0.0.1:port. Resolves once it is listening. */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  if (typeof options.token !== 'string' || options.token.length === 0) throw new Error('autorig serve: a token is required');
  const token = options.token;
  const log: Log = options.log ?? (() => {});
  // hello reports the execution provider: probe it now (in a child process, ~0.5 s) rather than in the first hello.
  await selectProvider();
  const limits: Limits = { ...protocolLimits, ...options.limits };
  const connections = new Map<WebSocket, Connection>();
  const models = new ModelHost(log);
  const queue = new JobQueue(options.jobSlots ?? defaultJobSlots(), models);
  // one for the whole server: the add-on opens a connection per request
  const poseReuse = new PoseReuseCache();
  let nextConnection = 1;

  const http = createServer((_request, response) => {
    response.writeHead(426, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
    response.end('this is the AutoRig sidecar: connect with a WebSocket\n');
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: hardMessageCap(limits), perMessageDeflate: false });

  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const refusal = checkUpgrade(request, token);
    if (refusal) {
      log(`refused a connection from ${request.socket.remoteAddress}: ${refusal.status} ${refusal.reason}`);
      refuse(socket, refusal.status, refusal.reason);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      const label = `client ${nextConnection++}`;
      log(`${label} connected`);
      ws.on('error', (err) => log(`${label}: ${err.message}`));
      ws.on('close', (code) => {
        connections.delete(ws);
        log(`${label} disconnected (${code})`);
      });
      connections.set(ws, serveConnection(ws, limits, log, label, queue, poseReuse));
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  http.on('error', (err) => log(`server error: ${err.message}`));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : options.port;

  let closing: Promise<void> | null = null;
  let warmUp: WarmUp | null = null;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      warmUp?.stop();
      for (const [ws, connection] of connections) {
        connection.stopJobs();
        ws.close(1001, 'the sidecar is shutting down');
        setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
      }
      wss.close();
      queue.close();
      const stopped = Promise.all([new Promise<void>((done) => http.close(() => done())), models.close()]);
      http.closeAllConnections();
      void stopped.then(() => resolve());
    });
    return closing;
  };
  if (options.warmModels) {
    const t0 = performance.now();
    // The default method's models first (the request most users send), then the rest.
    const first = modelsRunBy('rig', undefined);
    // Only the models installed: a missing one is answered MODEL_MISSING when a request needs it.
    const names = [...first, ...(Object.keys(MODEL_FILES) as ModelName[]).filter((name) => !first.includes(name))]
      .filter((name) => existsSync(modelPath(name)));
    void models.warm(names.map((name) => modelPath(name))).then(
      (failures) => {
        const took = ((performance.now() - t0) / 1000).toFixed(2);
        log(failures.length === 0 ? `models loaded (${names.join(', ')}) in ${took} s` : `models not loaded: ${failures.join('; ')}`);
      },
      (err: unknown) => {
        if (!closing) log(`models not loaded: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  }
  if (options.warmJobs) {
    warmUp = warmJobThread(queue);
    void warmUp.done.then((report) => {
      if (report.failures.length > 0) log(`job thread not warmed: ${report.failures.join('; ')}`);
      else if (report.stoppedFor === null) log(`job thread warmed (${report.jobs} jobs on the demo character) in ${report.seconds.toFixed(2)} s`);
      else log(`job thread warm-up stopped after ${report.jobs} jobs: ${report.stoppedFor === 'a job' ? 'a request came' : 'the server is closing'}`);
    });
  }
  return { port, models, warmUp: warmUp?.done ?? null, close };
}
