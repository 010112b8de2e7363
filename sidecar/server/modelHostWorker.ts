/**
 * Entry of the model host's thread (modelHost.ts): it holds the sidecar's onnxruntime sessions, each loaded once, and
 * answers the job threads that the server connects to it.
 *
 * From the server (parentPort): { type: 'connect', port } adds a job's port; { type: 'warm', id, paths } loads those
 * models now and answers { type: 'warmed', id, failures }; { type: 'stats', id } answers { type: 'stats', id, loads, runs };
 * { type: 'stop' } ends the thread as soon as no load or run is in progress (see modelHost.ts close()).
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { answerModelRequest, loadModel, type ModelHostRequest } from '../learned/onnxSession.js';

export type HostControl =
  | { type: 'connect'; port: MessagePort }
  | { type: 'warm'; id: number; paths: string[] }
  | { type: 'stats'; id: number }
  | { type: 'stop' };

export type HostReport =
  | { type: 'warmed'; id: number; failures: string[] }
  | { type: 'stats'; id: number; loads: number; runs: number };

const control = parentPort;
if (!control) throw new Error('modelHostWorker.ts runs only as a worker thread');

/** Model files loaded (successful loads, each once) and runs answered: the server's tests read them. */
const loaded = new Set<string>();
let runs = 0;

/**
 * Loads and runs in progress. The thread must not be terminated under one: onnxruntime-node aborts the whole process
 * (a Napi::Error thrown across its native thread) when the thread of a pending session load goes away.
 */
let inFlight = 0;
let stopping = false;

function track<T>(work: Promise<T>): Promise<T> {
  inFlight++;
  return work.finally(() => {
    inFlight--;
    if (stopping && inFlight === 0) process.exit(0);
  });
}

function serveJob(port: MessagePort): void {
  port.on('message', (request: ModelHostRequest) => {
    void track(answerModelRequest(request)).then(({ answer, transfer }) => {
      if (answer.ok) loaded.add(request.path);
      if (request.op === 'run' && answer.ok) runs++;
      // The job may have been cancelled meanwhile (its thread and port are gone): the answer is then dropped.
      try {
        port.postMessage(answer, transfer);
      } catch {
        port.close();
      }
    });
  });
  // A job's port must not keep this thread alive; the server ends the host when it stops.
  port.unref();
  port.on('close', () => port.removeAllListeners());
}

control.on('message', (message: HostControl) => {
  if (message.type === 'connect') serveJob(message.port);
  else if (message.type === 'warm') {
    void Promise.all(
      message.paths.map((path) =>
        track(loadModel(path)).then(
          () => {
            loaded.add(path);
            return null;
          },
          (err: unknown) => `${path}: ${err instanceof Error ? err.message : String(err)}`,
        ),
      ),
    ).then((results) => control.postMessage({ type: 'warmed', id: message.id, failures: results.filter((r) => r !== null) } satisfies HostReport));
  } else if (message.type === 'stats') {
    control.postMessage({ type: 'stats', id: message.id, loads: loaded.size, runs } satisfies HostReport);
  } else if (message.type === 'stop') {
    stopping = true;
    if (inFlight === 0) process.exit(0);
  }
});
