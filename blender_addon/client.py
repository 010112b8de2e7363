"""Talking to the AutoRig sidecar: finding or starting it, and running one job over a WebSocket (no bpy here).

The sidecar is a Node program (`autorig serve`). The add-on starts it itself when none answers:
`<node> <entry> serve --port <port>` with a fresh random token in AUTORIG_TOKEN, reads its ready line
`{"event":"ready","port":N,"protocol":1}` from stdout, and connects with `Authorization: Bearer <token>`.
The process is kept for later jobs and stopped when Blender quits (atexit) or the add-on is disabled.

Where the entry point comes from, first match wins:
  1. the add-on preference "Sidecar entry point" (a .js file such as <repo>/bin/autorig.js, or an executable);
  2. the environment variable AUTORIG_SIDECAR;
  3. `autorig` on PATH (what `npm install -g` or `npm link` in the repository provides).
Node comes from the "Node executable" preference, else `node` on PATH.

A Job is a small state machine advanced by `poll(timeout)`: the modal operator calls it from a timer with timeout 0,
the blocking execute() path (background mode) calls it in a loop. Both run the same code. `send_request()` takes a
job from its start to its request sent when the sidecar is up, so that a click does not wait on timer ticks for it.
"""

import atexit
import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections import deque

from . import messages, protocol
from . import msgpack
from . import websocket

__all__ = ["SidecarConfig", "SidecarError", "SidecarProcess", "resolve_command", "ensure_sidecar", "start_early",
           "stop_sidecar", "sidecar_reachable", "Job", "sidecar_status", "provider_text"]

READY_TIMEOUT = 30.0
# How long a click may wait for the handshake with a running sidecar before the modal timer takes over (send_request).
HANDSHAKE_WAIT = 0.2
CONNECT_TIMEOUT = 10.0
CANCEL_GRACE = 1.0


class SidecarError(messages.AutoRigFailure):
    """The sidecar could not be found, started or reached (code SIDECAR, not a protocol code: nothing was sent)."""

    def __init__(self, message):
        super().__init__("SIDECAR", message)


class SidecarConfig:
    """What the preferences say. node/entry: paths or ""; port: 0 lets the sidecar pick; token: for a sidecar the
    user started (else AUTORIG_TOKEN from the environment); auto_start: start one when none answers."""

    def __init__(self, node="", entry="", port=0, auto_start=True, token="", environ=None):
        self.node = node
        self.entry = entry
        self.port = int(port)
        self.auto_start = auto_start
        self.token = token
        self.environ = os.environ if environ is None else environ

    def key(self):
        return (self.node, self.entry, self.port)


def resolve_command(config, which=shutil.which):
    """argv that starts the sidecar (without `serve ...`), following the search order in the module doc.

    Raises SidecarError saying what to set when nothing is found.
    """
    entry = config.entry.strip() or config.environ.get("AUTORIG_SIDECAR", "").strip()
    if not entry:
        found = which("autorig")
        if found:
            entry = found
    if not entry:
        raise SidecarError("no sidecar found: set the add-on preference 'Sidecar entry point' to bin/autorig.js of "
                           "your AutoRig checkout, or set AUTORIG_SIDECAR, or put `autorig` on PATH (npm link)")
    entry = os.path.expanduser(entry)
    if not os.path.exists(entry):
        raise SidecarError("sidecar entry point %r does not exist" % entry)
    real = os.path.realpath(entry)
    if real.endswith((".js", ".mjs", ".cjs")):
        node = config.node.strip() or which("node")
        if not node:
            raise SidecarError("Node.js not found: set the add-on preference 'Node executable' (Node 20 or newer)")
        node = os.path.expanduser(node)
        if not os.path.exists(node) and not which(node):
            raise SidecarError("Node executable %r does not exist" % node)
        return [node, real]
    # An executable launcher (npm's shim on Windows, a wrapper script): run it directly.
    return [entry]


class SidecarProcess:
    """A sidecar this add-on started; reads its stdout (ready line) and stderr (kept for error messages) in threads,
    which touch no Blender data."""

    def __init__(self, argv, port, environ=None):
        self.token = secrets.token_hex(32)
        env = dict(os.environ if environ is None else environ)
        env["AUTORIG_TOKEN"] = self.token
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) if sys.platform == "win32" else 0
        self.argv = list(argv) + ["serve", "--port", str(int(port))]
        try:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, env=env, creationflags=flags)
        except OSError as err:
            raise SidecarError("could not start %s: %s" % (" ".join(self.argv), err)) from None
        self.port = None
        # The last hello result it answered (set by Job): the status line shows its execution provider.
        self.hello = None
        self.ready = threading.Event()
        self.stderr_tail = deque(maxlen=40)
        self._ready_error = None
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        for raw in self.process.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if self.ready.is_set() or not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "ready":
                if event.get("protocol") != protocol.PROTOCOL_VERSION:
                    self._ready_error = ("the sidecar speaks protocol %r, this add-on %d: update one of them"
                                         % (event.get("protocol"), protocol.PROTOCOL_VERSION))
                elif not isinstance(event.get("port"), int) or not 0 < event["port"] < 65536:
                    self._ready_error = "the sidecar's ready line has no valid port: %s" % line[:200]
                else:
                    self.port = event["port"]
                self.ready.set()

    def _read_stderr(self):
        for raw in self.process.stderr:
            self.stderr_tail.append(raw.decode("utf-8", "replace").rstrip())

    def alive(self):
        return self.process.poll() is None

    def check_ready(self):
        """True once the ready line arrived; raises SidecarError when the process died or sent a bad ready line."""
        if self.ready.is_set():
            if self._ready_error:
                raise SidecarError(self._ready_error)
            return True
        if not self.alive():
            time.sleep(0.05)  # let the reader threads drain the last lines
            tail = "\n".join(list(self.stderr_tail)[-8:])
            raise SidecarError("the sidecar exited (code %s) before it was ready%s"
                               % (self.process.returncode, ":\n" + tail if tail else ""))
        return False

    def stop(self, timeout=3.0):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()  # a sidecar may exit on stdin EOF
            except OSError:
                pass
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                stream.close()
            except (OSError, ValueError):
                pass


_managed = {"process": None, "key": None}


def ensure_sidecar(config):
    """The sidecar to use: (process or None, port or None, token). Starts one when needed; never blocks on it
    (the caller waits for `process.check_ready()` and then reads `process.port`)."""
    current = _managed["process"]
    if current is not None and current.alive() and _managed["key"] == config.key():
        return current, current.port, current.token
    if current is not None:
        stop_sidecar()
    if not config.auto_start:
        if config.port <= 0:
            raise SidecarError("no sidecar to connect to: set a port and a token of a running `autorig serve`, "
                               "or enable 'Start automatically'")
        return None, config.port, config.token or config.environ.get("AUTORIG_TOKEN", "")
    process = SidecarProcess(resolve_command(config), config.port, config.environ)
    _managed["process"], _managed["key"] = process, config.key()
    return process, None, process.token


def start_early(config):
    """Start the sidecar now, in the background, when the preferences let the add-on start one (`auto_start`): while
    the user works it loads its models and warms a job thread (`autorig serve` does both at start), so the first
    Auto Rig or Apply Latent Pose does not wait for them (through a sidecar just started, a first 42k-vertex apply
    took 1.05 s cold and 0.41 s warmed; bench "the first request to a sidecar just started"). Never blocks and never
    raises: returns the process, or None when none is to be started or none can be (the first job then says why)."""
    if not config.auto_start:
        return None
    try:
        process, _port, _token = ensure_sidecar(config)
    except SidecarError:
        return None
    return process


def sidecar_reachable(config, which=shutil.which):
    """Whether a job could reach a sidecar now, without starting or contacting one (cheap enough for an operator's
    poll): the sidecar this add-on started is running, or one can be started (the command resolves), or a port of a
    sidecar started by hand is set."""
    process = _managed["process"]
    if process is not None and process.alive() and _managed["key"] == config.key():
        return True
    if not config.auto_start:
        return config.port > 0
    try:
        resolve_command(config, which)
    except SidecarError:
        return False
    return True


def sidecar_running(config):
    """Whether a sidecar is up to take a request now, without starting one: the one this add-on started is running
    and ready, or (with auto_start off) the port of a sidecar started by hand is set. For work nobody clicked for
    (pose_prepare), which must never start a sidecar."""
    process = _managed["process"]
    if process is not None and _managed["key"] == config.key():
        return process.alive() and process.port is not None
    return not config.auto_start and config.port > 0


def jobs_in_flight(besides=None):
    """Whether a job of this add-on other than `besides` has not ended (an operator's request the sidecar works on)."""
    return any(job is not besides and job.state not in TERMINAL for job in list(_jobs))


def stop_sidecar():
    """Stop the sidecar this add-on started (if any)."""
    process, _managed["process"], _managed["key"] = _managed["process"], None, None
    if process is not None:
        process.stop()


atexit.register(stop_sidecar)


def provider_text(hello):
    """Where the sidecar runs its models, from a hello result: "cpu", or "cpu; cuda, webgpu unavailable" when it fell
    back (providerFallback entries are "name: reason"; the reasons are too long for a status line)."""
    def single_line(text):
        return " ".join(messages.display_text(text, 24).split())

    name = single_line(hello.get("executionProvider", "?"))
    failed = [single_line(str(entry).split(":", 1)[0]) for entry in hello.get("providerFallback") or []]
    if not failed:
        return name
    shown = ", ".join(failed[:3]) + (", ..." if len(failed) > 3 else "")
    return "%s; %s unavailable" % (name, shown)


def sidecar_status():
    """One line for the panel: "Sidecar ready on port N (cpu)" once a job has greeted it."""
    process = _managed["process"]
    if process is None:
        return "Sidecar: not started"
    if not process.alive():
        return "Sidecar: exited (code %s)" % process.process.returncode
    if process.port is None:
        return "Sidecar: starting..."
    if process.hello is not None:
        return "Sidecar ready on port %d (%s)" % (process.port, provider_text(process.hello))
    return "Sidecar: running on port %d" % process.port


# --- jobs ------------------------------------------------------------------------------------------------------------

STARTING, CONNECTING, HELLO, RUNNING, CANCELLING, DONE, FAILED, CANCELLED = (
    "starting", "connecting", "hello", "running", "cancelling", "done", "failed", "cancelled")
TERMINAL = (DONE, FAILED, CANCELLED)


# Every Job not yet garbage-collected (jobs_in_flight reads it); an operator drops its job once it has finished.
_jobs = weakref.WeakSet()


def new_job_id(kind):
    return "%s-%s" % (kind, uuid.uuid4().hex[:16])


class Job:
    """One request to the sidecar, from start-up to result.

    request: the request map (rig_request/skin_request), whose `id` is the job id;
    check_result: function(result payload) -> checked result (raises ProtocolError/AutoRigFailure).
    After poll() returns a terminal state: `result` (DONE), `error` as (code, message) (FAILED/CANCELLED).
    `stage`/`fraction` follow the sidecar's progress events.
    """

    def __init__(self, config, request, check_result, client_name="autorig-blender", timeout=600.0):
        self.config = config
        self.request = request
        self.id = request["id"]
        self.kind = request["kind"]
        self.check_result = check_result
        self.client_name = client_name
        self.state = STARTING
        self.stage = "starting the sidecar"
        self.fraction = 0.0
        self.result = None
        self.error = None
        self.hello = None
        self.socket = None
        self.deadline = time.monotonic() + timeout
        self._phase_deadline = time.monotonic() + READY_TIMEOUT
        self._process = None
        self._port = None
        self._token = None
        self._hello_id = None
        self._cancel_deadline = None
        _jobs.add(self)

    # --- driving ---

    def poll(self, timeout=0.0):
        """Advance as far as possible, waiting at most about `timeout` seconds in all for the sidecar; returns the state.

        Steps that need no waiting follow each other in one call (a ready sidecar: connect, greet, and once its hello
        answer is in, send the request), so that a caller driven by a timer spends no tick per step."""
        deadline = time.monotonic() + timeout
        while True:
            before = self.state
            self._step(max(0.0, deadline - time.monotonic()))
            if self.state in TERMINAL or self.state == before:
                return self.state

    def send_request(self, timeout=HANDSHAKE_WAIT):
        """Advance until the request is on its way (RUNNING) or the job has ended, waiting at most about `timeout`
        seconds; returns the state. The modal path calls it when the user clicks, so that the handshake with a sidecar
        already running (connect, hello and its answer: milliseconds on this machine) costs no timer ticks; a sidecar
        still starting, or slow to answer, is left to the ticks."""
        deadline = time.monotonic() + timeout
        while self.state not in TERMINAL and self.state not in (RUNNING, CANCELLING):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            before = self.state
            self._step(remaining)
            if self.state == STARTING and before == STARTING:
                break  # the sidecar is still starting: seconds, not for the UI to wait on
        return self.state

    def _step(self, timeout):
        """One step of the state machine, waiting at most about `timeout` seconds for the sidecar."""
        try:
            if self.state == STARTING:
                self._poll_starting(timeout)
            elif self.state == CONNECTING:
                self._connect()
            elif self.state in (HELLO, RUNNING, CANCELLING):
                self._poll_socket(timeout)
            if self.state not in TERMINAL and time.monotonic() > self.deadline:
                self._fail("TIMEOUT", "no answer from the sidecar in time")
        except messages.AutoRigFailure as err:
            self._fail(err.code, err.message)
        except (messages.ProtocolError, msgpack.MsgpackError) as err:
            self._fail("BAD_RESULT", "the sidecar's answer is not valid: %s" % err)
        except websocket.HandshakeError as err:
            hint = " (wrong token?)" if err.status in (401, 403) else ""
            self._fail("SIDECAR", "the sidecar refused the connection: %s%s" % (err, hint))
        except websocket.ConnectionClosed as err:
            if self.state == CANCELLING:
                self._finish(CANCELLED, (protocol.ERROR_CANCELLED, "cancelled"))
            else:
                self._fail("SIDECAR", self._sidecar_exit_note() or "the connection to the sidecar was lost (%s)" % err)
        except OSError as err:
            self._fail("SIDECAR", self._sidecar_exit_note() or "cannot reach the sidecar: %s" % err)
        except Exception as err:  # an answer this code did not foresee must still end the job, not the operator
            self._fail("BAD_RESULT", "the sidecar's answer could not be handled (%s: %s)" % (type(err).__name__, err))
        return self.state

    def _sidecar_exit_note(self):
        """When the sidecar this job started has died: a message saying so (the next job starts a new one)."""
        process = self._process
        if process is None:
            return None
        try:
            process.process.wait(0.2)  # the socket closes as the process dies: give it a moment to be reaped
        except subprocess.TimeoutExpired:
            return None
        tail = "\n".join(list(process.stderr_tail)[-4:])
        return ("the sidecar stopped during the job (exit code %s); the next run starts a new one%s"
                % (process.process.returncode, ":\n" + tail if tail else ""))

    def run(self, poll_interval=0.05):
        """Blocking path (background mode, tests): poll until the job ends; returns the final state."""
        while self.poll(poll_interval) not in TERMINAL:
            if self.state in (STARTING,):
                time.sleep(poll_interval)
        return self.state

    def cancel(self):
        """Ask the sidecar to stop this job; the job ends CANCELLED when it confirms (or after a short grace)."""
        if self.state in TERMINAL:
            return
        if self.state == RUNNING and self.socket is not None:
            try:
                self._send(messages.cancel_request(self.id))
                self.state = CANCELLING
                self._cancel_deadline = time.monotonic() + CANCEL_GRACE
                return
            except websocket.WebSocketError:
                pass
        self._finish(CANCELLED, (protocol.ERROR_CANCELLED, "cancelled"))

    def close(self):
        if self.socket is not None:
            try:
                self.socket.close(timeout=0.5)
            except OSError:
                pass
            self.socket = None

    # --- states ---

    def _poll_starting(self, timeout):
        if self._process is None and self._port is None:
            self._process, self._port, self._token = ensure_sidecar(self.config)
        if self._process is not None:
            if not self._process.check_ready():
                if time.monotonic() > self._phase_deadline:
                    raise SidecarError("the sidecar did not report ready within %d s" % READY_TIMEOUT)
                self._process.ready.wait(min(timeout, 0.1))
                if not self._process.check_ready():
                    return
            self._port = self._process.port
        self.state = CONNECTING
        self.stage = "connecting"
        self._connect()

    def _connect(self):
        self.socket = websocket.connect("127.0.0.1", self._port, token=self._token, timeout=CONNECT_TIMEOUT,
                                        max_message=protocol.MAX_MESSAGE_BYTES)
        self._hello_id = new_job_id("hello")
        self._send(messages.hello_request(self._hello_id, self.client_name))
        self.state = HELLO
        self.stage = "greeting the sidecar"

    def _send(self, message):
        data = msgpack.packb(message)
        if len(data) > protocol.MAX_MESSAGE_BYTES:
            raise messages.AutoRigFailure(protocol.ERROR_TOO_LARGE, "the mesh is too large to send (%d MB)"
                                          % (len(data) >> 20))
        self.socket.send_binary(data)

    def _poll_socket(self, timeout):
        if self.state == CANCELLING and time.monotonic() > self._cancel_deadline:
            self._finish(CANCELLED, (protocol.ERROR_CANCELLED, "cancelled"))
            return
        for raw in self.socket.poll(timeout):
            if isinstance(raw, str):
                raise messages.ProtocolError("", "the sidecar sent a text frame")
            self._handle(msgpack.unpackb(raw))
            if self.state in TERMINAL:
                return

    def _handle(self, message):
        messages.check_message(message)
        kind, message_id = message["kind"], message.get("id")
        if kind == protocol.KIND_ERROR:
            if message_id in (self.id, self._hello_id, None):
                code = message["code"]
                if code == protocol.ERROR_CANCELLED or self.state == CANCELLING:
                    self._finish(CANCELLED, (code, message["message"]))
                else:
                    self._fail(code, message["message"])
            return
        if kind == protocol.KIND_PROGRESS:
            if message_id == self.id and self.state == RUNNING:
                self.stage = message["stage"]
                self.fraction = min(1.0, max(0.0, float(message["fraction"])))
            return
        if kind == protocol.KIND_RESULT:
            payload = messages.result_payload(message)
            if self.state == HELLO and message_id == self._hello_id:
                self.hello = messages.check_hello_result(payload)
                if self._process is not None:
                    self._process.hello = self.hello
                self._send(self.request)
                self.state = RUNNING
                self.stage = "sent %s request" % self.kind
            elif self.state in (RUNNING, CANCELLING) and message_id == self.id:
                if message.get("request") not in (None, self.kind):
                    raise messages.ProtocolError("request", "result for %r, expected %r"
                                                 % (message.get("request"), self.kind))
                self.result = self.check_result(payload)
                self.fraction = 1.0
                self._finish(DONE, None)

    def _fail(self, code, message):
        self._finish(FAILED, (code, message))

    def _finish(self, state, error):
        self.state = state
        self.error = error
        self.close()
