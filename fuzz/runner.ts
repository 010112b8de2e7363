/**
 * Runs fuzz cases against a real `autorig serve` child process and checks, for every case:
 * - the sidecar is still alive (a child that exits is a crash: recorded with its stderr, and a fresh one started);
 * - the case got its answer: the exact replies (by kind, code and id, in order) for protocol messages, a close with
 *   the right code for broken framing, the right HTTP status for a broken upgrade — never silence;
 * - every reply conforms to protocol.json, and no reply or log line contains the token;
 * - the next valid request is served: a `hello` probe after every case (on a fresh connection when the case closed
 *   its own).
 * Returns a report: cases by layer and generator, replies by code, closes by code, HTTP statuses, failures,
 * crashes, reply latency (p50/p99), the sidecar's memory before and after.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { encodeMessage } from '../shared-schema/codec.js';
import { LAYERS, type ExpectedReply, type FramesCase, type FuzzCase, type HandshakeCase, type Layer, type MessagesCase } from './cases.js';
import { CaseStream } from './generate.js';
import { connectTcp, RawConnection, readResponseHead, SecretWatch, type Message, type ServerEvent } from './rawConnection.js';
import { defaultSidecarCommand, SidecarProcess, type ExitStatus, type SidecarCommand } from './sidecarProcess.js';
import { binaryFrame, responseStatus } from './wsWire.js';

export interface FuzzOptions {
  cases: number;
  seed: number;
  /** How to start the sidecar (default: from sources under vitest, else the built CLI). */
  command?: SidecarCommand;
  /** Longest wait for an answer that needs no pipeline run (ms). */
  replyTimeoutMs?: number;
  /** Longest wait for a job that runs the pipeline to its end (ms). */
  jobTimeoutMs?: number;
  /** Progress notes (every 1000 cases) and crash notes. */
  log?: (line: string) => void;
}

export interface CaseFailure {
  index: number;
  layer: Layer;
  name: string;
  problem: string;
}

export interface CrashRecord {
  index: number;
  layer: Layer;
  name: string;
  exit: ExitStatus;
  stderrTail: string;
}

export interface MemoryFigures {
  /** VmRSS after the sidecar started and answered one hello (KiB). */
  startKiB: number;
  /** VmRSS after the last case (KiB). */
  endKiB: number;
  /** VmHWM: the peak resident size of the (last) sidecar process (KiB). */
  peakKiB: number;
  /** VmRSS after every 1000 cases (KiB). */
  samplesKiB: number[];
}

export interface FuzzReport {
  seed: number;
  cases: number;
  seconds: number;
  byLayer: Record<Layer, number>;
  byGenerator: Record<string, number>;
  /** Replies to the cases' messages: results, and errors by code. */
  results: number;
  errors: Record<string, number>;
  /** How the connections that cases closed ended: the server's close code, 'eof' (no close frame), 'client-reset'. */
  closes: Record<string, number>;
  /** HTTP statuses that answered broken upgrade requests (0: closed without a response). */
  http: Record<string, number>;
  pongs: number;
  /** Cases that got their whole expected answer. */
  answered: number;
  failures: CaseFailure[];
  crashes: CrashRecord[];
  latencyMs: { p50: number; p99: number; max: number };
  memory: MemoryFigures | null;
  /** Times the token appeared in the sidecar's stdout/stderr, and in bytes it sent to clients. */
  tokenSightings: { output: number; replies: number };
  /** Pose requests the sidecar held while another job (of either connection) read their mesh. */
  heldRequests: number;
  /** The hello on a fresh connection after the last case was answered. */
  finalRequestServed: boolean;
  /** The sidecar stopped with exit code 0 on SIGTERM at the end. */
  cleanShutdown: boolean;
}

/** A token like the add-on's: 64 hex digits. */
function freshToken(): string {
  return randomBytes(32).toString('hex');
}

/** The probe request that proves a connection still serves. */
function probeFrame(id: string): Buffer {
  return binaryFrame(encodeMessage({ kind: 'hello', id, protocol: 1, client: 'autorig-fuzz-probe' }));
}

const isProbeId = (id: unknown) => typeof id === 'string' && id.startsWith('probe:');

/** The replies in `events` from `mark` on: final messages (not progress) that do not answer a probe. */
function repliesSince(events: ServerEvent[], mark: number): Message[] {
  const out: Message[] = [];
  for (let i = mark; i < events.length; i++) {
    const event = events[i];
    if (event.type === 'message' && event.message.kind !== 'progress' && !isProbeId(event.message.id)) out.push(event.message);
  }
  return out;
}

/** Why `reply` is not `expected`, or null when it is. */
function replyMismatch(reply: Message, expected: ExpectedReply): string | null {
  const got = `${reply.kind}${reply.code ? ` ${String(reply.code)}` : ''} id=${JSON.stringify(reply.id)}`;
  if (reply.id !== expected.id) return `expected id ${JSON.stringify(expected.id)}, got ${got}`;
  switch (expected.kind) {
    case 'result':
      return reply.kind === 'result' ? null : `expected a result, got ${got}: ${String(reply.message ?? '')}`;
    case 'error':
      return reply.kind === 'error' && reply.code === expected.code ? null : `expected error ${expected.code}, got ${got}: ${String(reply.message ?? '')}`;
    case 'terminal':
      return reply.kind === 'result' || (reply.kind === 'error' && reply.code !== 'INTERNAL') ? null : `expected a result or a coded error, got ${got}: ${String(reply.message ?? '')}`;
    case 'accepted':
      return reply.kind === 'result' || (reply.kind === 'error' && reply.code === 'CANCELLED') ? null : `expected CANCELLED or a result, got ${got}: ${String(reply.message ?? '')}`;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Run `options.cases` cases of seed `options.seed` against a fresh sidecar. Never throws for a case's outcome. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const runner = new FuzzRunner(options);
  return runner.run();
}

class FuzzRunner {
  private readonly token = freshToken();
  private readonly command: SidecarCommand;
  private readonly replyTimeoutMs: number;
  private readonly jobTimeoutMs: number;
  private readonly log: (line: string) => void;
  private sidecar!: SidecarProcess;
  private main: RawConnection | null = null;
  private probes = 0;
  private readonly watches: SecretWatch[] = [];
  private outputSightings = 0;
  private readonly latencies: number[] = [];
  private readonly report: FuzzReport;

  constructor(private readonly options: FuzzOptions) {
    this.command = options.command ?? defaultSidecarCommand();
    this.replyTimeoutMs = options.replyTimeoutMs ?? 5000;
    this.jobTimeoutMs = options.jobTimeoutMs ?? 60_000;
    this.log = options.log ?? (() => {});
    this.report = {
      seed: options.seed,
      cases: 0,
      seconds: 0,
      byLayer: Object.fromEntries(LAYERS.map((layer) => [layer, 0])) as Record<Layer, number>,
      byGenerator: {},
      results: 0,
      errors: {},
      closes: {},
      http: {},
      pongs: 0,
      answered: 0,
      failures: [],
      crashes: [],
      latencyMs: { p50: 0, p99: 0, max: 0 },
      memory: null,
      tokenSightings: { output: 0, replies: 0 },
      heldRequests: 0,
      finalRequestServed: false,
      cleanShutdown: false,
    };
  }

  async run(): Promise<FuzzReport> {
    const started = performance.now();
    await this.startSidecar();
    const first = await this.probe(await this.mainConnection());
    if (!first) throw new Error('the sidecar did not answer the first hello');
    const startMemory = this.sidecar.memory();
    const samples: number[] = [];
    const stream = new CaseStream(this.options.seed);
    for (let n = 0; n < this.options.cases; n++) {
      const { index, fuzzCase } = stream.next({ token: this.token, port: this.sidecar.port });
      await this.runOne(index, fuzzCase);
      if ((n + 1) % 1000 === 0) {
        samples.push(this.sidecar.memory()?.rssKiB ?? 0);
        this.log(`${n + 1} cases, ${this.report.failures.length} failures, ${this.report.crashes.length} crashes, ${((performance.now() - started) / 1000).toFixed(1)} s`);
      }
    }
    // The final valid request, on a connection of its own.
    this.main?.destroy();
    this.main = null;
    try {
      const last = await this.mainConnection();
      this.report.finalRequestServed = !this.sidecar.exit && (await this.probe(last));
      last.destroy();
    } catch {
      this.report.finalRequestServed = false;
    }
    const endMemory = this.sidecar.memory();
    if (startMemory && endMemory) this.report.memory = { startKiB: startMemory.rssKiB, endKiB: endMemory.rssKiB, peakKiB: endMemory.peakKiB, samplesKiB: samples };
    const status = await this.sidecar.stop();
    this.report.cleanShutdown = status.code === 0;
    this.outputSightings += this.sidecar.outputWatch.sightings;
    this.report.heldRequests += this.sidecar.heldRequests;
    this.report.tokenSightings = { output: this.outputSightings, replies: this.watches.reduce((n, w) => n + w.sightings, 0) };
    const sorted = this.latencies.slice().sort((a, b) => a - b);
    this.report.latencyMs = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? 0 };
    this.report.seconds = (performance.now() - started) / 1000;
    return this.report;
  }

  private async startSidecar(): Promise<void> {
    this.sidecar = await SidecarProcess.start(this.token, this.command);
  }

  private newWatch(): SecretWatch {
    const watch = new SecretWatch(this.token);
    this.watches.push(watch);
    return watch;
  }

  /** The runner's own authenticated connection, reopened when a case closed it. */
  private async mainConnection(): Promise<RawConnection> {
    if (!this.main || this.main.closed) this.main = await RawConnection.open(this.sidecar.port, this.token, this.newWatch(), this.replyTimeoutMs);
    return this.main;
  }

  /** Send a hello on `connection` and wait for its result; true when it came. */
  private async probe(connection: RawConnection): Promise<boolean> {
    const id = `probe:${this.probes++}`;
    const mark = connection.events.length;
    connection.write(probeFrame(id));
    return connection.waitFor((events) => hasReplyTo(events, id, mark), this.replyTimeoutMs);
  }

  private async runOne(index: number, fuzzCase: FuzzCase): Promise<void> {
    this.report.cases++;
    this.report.byLayer[fuzzCase.layer]++;
    this.report.byGenerator[fuzzCase.name] = (this.report.byGenerator[fuzzCase.name] ?? 0) + 1;
    const fail = (problem: string) => this.report.failures.push({ index, layer: fuzzCase.layer, name: fuzzCase.name, problem });
    let answered = false;
    try {
      if (fuzzCase.shape === 'messages') answered = await this.runMessages(fuzzCase, fail);
      else if (fuzzCase.shape === 'frames') answered = await this.runFrames(fuzzCase, fail);
      else answered = await this.runHandshake(fuzzCase, fail);
      // The next valid request must be served (runMessages probes as part of every phase).
      if (fuzzCase.shape !== 'messages' && !this.sidecar.exit) {
        if (!(await this.probe(await this.mainConnection()))) fail('the hello after the case was not answered');
      }
    } catch (err) {
      fail(`the runner could not complete the case: ${(err as Error).message}`);
      this.main?.destroy();
      this.main = null;
    }
    if (answered) this.report.answered++;
    for (const problem of this.main?.violations.splice(0) ?? []) fail(problem);
    if (this.sidecar.exit) await this.recordCrash(index, fuzzCase);
  }

  private async recordCrash(index: number, fuzzCase: FuzzCase): Promise<void> {
    const exit = this.sidecar.exit!;
    this.report.crashes.push({ index, layer: fuzzCase.layer, name: fuzzCase.name, exit, stderrTail: this.sidecar.stderrTail.slice(-4000) });
    this.log(`CRASH at case ${index} (${fuzzCase.layer}/${fuzzCase.name}): ${JSON.stringify(exit)}; restarting the sidecar`);
    this.outputSightings += this.sidecar.outputWatch.sightings;
    this.report.heldRequests += this.sidecar.heldRequests;
    this.main?.destroy();
    this.main = null;
    await this.startSidecar();
  }

  /** Count the replies and closes of a finished case into the report. */
  private tally(events: ServerEvent[], mark: number): void {
    for (let i = mark; i < events.length; i++) {
      const event = events[i];
      if (event.type === 'pong') this.report.pongs++;
      else if (event.type === 'close') this.report.closes[String(event.outcome)] = (this.report.closes[String(event.outcome)] ?? 0) + 1;
      else if (event.message.kind === 'result' && !isProbeId(event.message.id)) this.report.results++;
      else if (event.message.kind === 'error') {
        const code = String(event.message.code);
        this.report.errors[code] = (this.report.errors[code] ?? 0) + 1;
      }
    }
  }

  /** Latency of a case: from its last write to the first thing the server sent back for it. */
  private noteLatency(events: ServerEvent[], mark: number, lastWrite: number): void {
    const first = events.slice(mark).find((event) => event.type !== 'message' || !isProbeId(event.message.id)) ?? events[mark];
    if (first) this.latencies.push(first.at - lastWrite);
  }

  private async writeChunks(connection: RawConnection, chunks: Buffer[]): Promise<void> {
    for (let i = 0; i < chunks.length; i++) {
      connection.write(chunks[i]);
      if (i < chunks.length - 1) await tick();
    }
  }

  private async runMessages(fuzzCase: MessagesCase, fail: (problem: string) => void): Promise<boolean> {
    let peer: RawConnection | null = null;
    let allGood = true;
    try {
      for (const phase of fuzzCase.phases) {
        const main = await this.mainConnection();
        if (phase.writes.some((write) => write.conn === 1) || phase.replies[1].length > 0) {
          peer ??= await RawConnection.open(this.sidecar.port, this.token, this.newWatch(), this.replyTimeoutMs);
        }
        const connections = [main, peer];
        const marks = connections.map((connection) => connection?.events.length ?? 0);
        for (const write of phase.writes) await this.writeChunks(connections[write.conn]!, write.chunks);
        const lastWrite = performance.now();
        for (const side of [0, 1] as const) {
          const connection = connections[side];
          if (!connection) continue;
          const expected = phase.replies[side];
          // A job refused by the pipeline itself (unknown method) also waits for a worker.
          const timeout = fuzzCase.layer === 'schema' ? this.jobTimeoutMs : this.timeoutFor(expected);
          const probeId = `probe:${this.probes++}`;
          connection.write(probeFrame(probeId));
          const done = await connection.waitFor((events) => hasReplyTo(events, probeId, marks[side]) && repliesSince(events, marks[side]).length >= expected.length, timeout);
          const replies = repliesSince(connection.events, marks[side]);
          this.tally(connection.events, marks[side]);
          if (side === 0) this.noteLatency(connection.events, marks[side], lastWrite);
          if (connection.closed) {
            fail(`connection ${side} closed during a messages case (${closeOutcome(connection.events, marks[side])})`);
            allGood = false;
            continue;
          }
          if (!done) {
            fail(`connection ${side}: no complete answer within the time limit: expected ${expected.length} replies and the probe; got ${JSON.stringify(replies.map(summary))}`);
            allGood = false;
            continue;
          }
          if (replies.length !== expected.length) {
            fail(`connection ${side}: expected ${expected.length} replies, got ${replies.length}: ${JSON.stringify(replies.map(summary))}`);
            allGood = false;
          }
          expected.forEach((want, i) => {
            const problem = replies[i] ? replyMismatch(replies[i], want) : null;
            if (problem) {
              fail(`connection ${side}, reply ${i}: ${problem}`);
              allGood = false;
            }
          });
        }
      }
    } finally {
      if (peer) {
        for (const problem of peer.violations) fail(`connection 1: ${problem}`);
        peer.destroy();
      }
    }
    return allGood;
  }

  /** Jobs that run the pipeline need the long timeout. */
  private timeoutFor(expected: ExpectedReply[]): number {
    return expected.some((reply) => reply.kind === 'terminal') ? this.jobTimeoutMs : this.replyTimeoutMs;
  }

  private async runFrames(fuzzCase: FramesCase, fail: (problem: string) => void): Promise<boolean> {
    const connection = await this.mainConnection();
    const mark = connection.events.length;
    await this.writeChunks(connection, fuzzCase.chunks);
    const lastWrite = performance.now();
    const expect = fuzzCase.expect;
    if ('close' in expect) {
      if (fuzzCase.then === 'end') connection.end();
      if (fuzzCase.then === 'reset') {
        connection.reset();
        this.report.closes['client-reset'] = (this.report.closes['client-reset'] ?? 0) + 1;
        this.main = null;
        return true;
      }
      const closed = await connection.waitFor(() => connection.closed, this.replyTimeoutMs);
      for (const problem of connection.violations.splice(0)) fail(problem);
      this.tally(connection.events, mark);
      this.noteLatency(connection.events, mark, lastWrite);
      this.main = null;
      connection.destroy();
      if (!closed) {
        fail(`the server did not close the connection within ${this.replyTimeoutMs} ms`);
        return false;
      }
      const outcome = closeOutcome(connection.events, mark);
      const results = repliesSince(connection.events, mark).filter((reply) => reply.kind === 'result');
      if (results.length > 0) {
        fail(`a request was answered with a result although the connection was closing: ${JSON.stringify(results.map(summary))}`);
        return false;
      }
      if (expect.close !== 'any' && !(expect.close as Array<string | number>).includes(outcome)) {
        fail(`expected a close with ${expect.close.join(' or ')}, got ${String(outcome)}`);
        return false;
      }
      return true;
    }
    const probeId = `probe:${this.probes++}`;
    connection.write(probeFrame(probeId));
    const done = await connection.waitFor((events) => hasReplyTo(events, probeId, mark) && repliesSince(events, mark).length >= expect.replies.length, this.timeoutFor(expect.replies));
    this.tally(connection.events, mark);
    this.noteLatency(connection.events, mark, lastWrite);
    const replies = repliesSince(connection.events, mark);
    const pongs = connection.events.slice(mark).filter((event) => event.type === 'pong').length;
    if (!done || connection.closed) {
      fail(`${connection.closed ? 'the connection closed' : 'no complete answer'}: expected ${expect.replies.length} replies, got ${JSON.stringify(replies.map(summary))}`);
      return false;
    }
    let good = replies.length === expect.replies.length && pongs === expect.pongs;
    if (!good) fail(`expected ${expect.replies.length} replies and ${expect.pongs} pongs, got ${JSON.stringify(replies.map(summary))} and ${pongs} pongs`);
    expect.replies.forEach((want, i) => {
      const problem = replies[i] ? replyMismatch(replies[i], want) : null;
      if (problem) {
        fail(`reply ${i}: ${problem}`);
        good = false;
      }
    });
    return good;
  }

  private async runHandshake(fuzzCase: HandshakeCase, fail: (problem: string) => void): Promise<boolean> {
    let socket: Socket;
    try {
      socket = await connectTcp(this.sidecar.port, this.replyTimeoutMs);
    } catch (err) {
      fail(`cannot connect: ${(err as Error).message}`);
      return false;
    }
    const watch = this.newWatch();
    try {
      for (let i = 0; i < fuzzCase.chunks.length - 1; i++) socket.write(fuzzCase.chunks[i]);
      const sent = performance.now();
      const reading = readResponseHead(socket, fuzzCase.chunks[fuzzCase.chunks.length - 1], watch, this.replyTimeoutMs);
      if (fuzzCase.then === 'end') socket.end();
      const { head, closed } = await reading;
      this.latencies.push(performance.now() - sent);
      const status = responseStatus(head) ?? (closed && head.length === 0 ? 0 : null);
      if (status === null) {
        fail(`no HTTP answer and no close within ${this.replyTimeoutMs} ms (got ${JSON.stringify(head.slice(0, 80))})`);
        return false;
      }
      this.report.http[String(status)] = (this.report.http[String(status)] ?? 0) + 1;
      if (!fuzzCase.statuses.includes(status)) {
        fail(`expected HTTP ${fuzzCase.statuses.join(' or ')}, got ${status}: ${head.split('\r\n')[0]}`);
        return false;
      }
      return true;
    } finally {
      socket.destroy();
    }
  }
}

/** True when a message with this id arrived at or after `mark`. */
function hasReplyTo(events: ServerEvent[], id: string, mark: number): boolean {
  for (let i = events.length - 1; i >= mark; i--) {
    const event = events[i];
    if (event.type === 'message' && event.message.id === id) return true;
  }
  return false;
}

/** How the connection closed after `mark`: the close code, or 'eof' when it ended without a close frame. */
function closeOutcome(events: ServerEvent[], mark: number): string | number {
  for (let i = mark; i < events.length; i++) {
    const event = events[i];
    if (event.type === 'close') return event.outcome;
  }
  return 'eof';
}

function summary(message: Message): string {
  return `${String(message.kind)}${message.code ? `:${String(message.code)}` : ''}:${JSON.stringify(message.id)}`;
}
