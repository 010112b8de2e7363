"""A WebSocket server for the add-on's tests (socketserver, standard library only).

Each connection runs a scripted `behaviour(conn)` so a test can make the server fragment messages, ping, close, mask
wrongly or send a bad Sec-WebSocket-Accept, and check what the client sent (masking, Authorization header).
"""

import base64
import hashlib
import socket
import socketserver
import struct
import threading

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class ServerConnection:
    """The server side of one WebSocket connection, with frame-level helpers for the test behaviours."""

    def __init__(self, sock, request_headers):
        self.sock = sock
        self.headers = request_headers
        self.buffer = b""
        self.frames_seen = []  # (fin, opcode, masked, length) of every client frame read
        self.pongs = []
        self.close_payload = None

    def _read_exact(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("client went away")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read_frame(self):
        """One client frame, unmasked: (fin, opcode, payload)."""
        b0, b1 = self._read_exact(2)
        fin, opcode, masked, length = bool(b0 & 0x80), b0 & 0x0F, bool(b1 & 0x80), b1 & 0x7F
        if length == 126:
            (length,) = struct.unpack(">H", self._read_exact(2))
        elif length == 127:
            (length,) = struct.unpack(">Q", self._read_exact(8))
        mask = self._read_exact(4) if masked else b"\0\0\0\0"
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self._read_exact(length))) if length < 4096 else _unmask(
            self._read_exact(length), mask)
        self.frames_seen.append((fin, opcode, masked, length))
        return fin, opcode, payload

    def read_message(self):
        """One client data message (reassembled), answering/recording control frames: (opcode, payload) or None on close."""
        parts, first_opcode = [], None
        while True:
            fin, opcode, payload = self.read_frame()
            if opcode == 0x9:
                self.send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                self.pongs.append(payload)
                continue
            if opcode == 0x8:
                self.close_payload = payload
                return None
            if first_opcode is None:
                first_opcode = opcode
            parts.append(payload)
            if fin:
                return first_opcode, b"".join(parts)

    def send_frame(self, opcode, payload, fin=True, mask=None):
        head = bytes([(0x80 if fin else 0) | opcode])
        n = len(payload)
        mask_bit = 0x80 if mask else 0
        if n < 126:
            head += bytes([mask_bit | n])
        elif n <= 0xFFFF:
            head += bytes([mask_bit | 126]) + struct.pack(">H", n)
        else:
            head += bytes([mask_bit | 127]) + struct.pack(">Q", n)
        if mask:
            head += mask
            payload = _unmask(payload, mask)
        self.sock.sendall(head + payload)

    def send_binary(self, payload):
        self.send_frame(0x2, payload)

    def send_close(self, code=1000, reason=b""):
        self.send_frame(0x8, struct.pack(">H", code) + reason)


def _unmask(data, mask):
    n = len(data)
    if n == 0:
        return b""
    return (int.from_bytes(data, "little") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "little")).to_bytes(n, "little")


def accept_for(key):
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


class TestServer:
    """Serve on 127.0.0.1:<free port>; `behaviour(conn)` runs per connection in its own thread.

    token: when set, an upgrade without `Authorization: Bearer <token>` gets HTTP 401.
    bad_accept: answer 101 with a wrong Sec-WebSocket-Accept.
    greeting: raw frame bytes sent in the same write as the 101 answer.
    """

    def __init__(self, behaviour, token=None, bad_accept=False, port=0, greeting=b""):
        self.behaviour = behaviour
        self.token = token
        self.bad_accept = bad_accept
        self.greeting = greeting
        self.connections = []
        self.errors = []
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                outer._handle(self.request)

        class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.server = Server(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def serve_forever(self):
        self.server.serve_forever()

    def _handle(self, sock):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if self.token is not None and headers.get("authorization") != "Bearer " + self.token:
            sock.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        key = headers.get("sec-websocket-key", "")
        accept = accept_for(key if not self.bad_accept else key + "x")
        sock.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode() + self.greeting)
        conn = ServerConnection(sock, headers)
        conn.buffer = rest
        self.connections.append(conn)
        try:
            self.behaviour(conn)
        except (ConnectionError, OSError):
            pass
        except Exception as err:  # surfaced by the tests through `errors`
            self.errors.append(err)
        finally:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
