"""RFC 6455 client against a scripted Python server: handshake, auth header, masking, fragmentation both ways,
ping/pong, close handshake, protocol violations, bad Accept, and non-blocking poll."""

import struct
import time
import unittest
from unittest import mock

import support  # noqa: F401
from blender_addon import websocket as ws
from ws_test_server import TestServer


def echo(conn):
    """Echo every data message back unfragmented; answer close."""
    while True:
        msg = conn.read_message()
        if msg is None:
            conn.send_close(1000)
            return
        conn.send_frame(msg[0], msg[1])


class Handshake(unittest.TestCase):
    def test_accept_key_rfc_example(self):
        # RFC 6455 §1.3 example.
        self.assertEqual(ws.accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_bearer_header_and_echo(self):
        with TestServer(echo, token="s3cret") as server:
            client = ws.connect("127.0.0.1", server.port, token="s3cret", timeout=5)
            client.send_binary(b"\x01\x02\x03")
            self.assertEqual(client.receive(5), b"\x01\x02\x03")
            client.close()
            conn = server.connections[0]
            self.assertEqual(conn.headers["authorization"], "Bearer s3cret")
            self.assertEqual(conn.headers["sec-websocket-version"], "13")
            self.assertNotIn("origin", conn.headers)
            self.assertTrue(all(masked for _, _, masked, _ in conn.frames_seen), "every client frame is masked")

    def test_wrong_token_is_refused(self):
        with TestServer(echo, token="right") as server:
            with self.assertRaises(ws.HandshakeError) as ctx:
                ws.connect("127.0.0.1", server.port, token="wrong", timeout=5)
            self.assertEqual(ctx.exception.status, 401)

    def test_bad_accept_is_refused(self):
        with TestServer(echo, bad_accept=True) as server:
            with self.assertRaises(ws.HandshakeError) as ctx:
                ws.connect("127.0.0.1", server.port, timeout=5)
            self.assertIn("Sec-WebSocket-Accept", str(ctx.exception))

    def test_frames_that_arrive_with_the_handshake_answer(self):
        def behaviour(conn):
            conn.read_message()

        with TestServer(behaviour, greeting=b"\x82\x02hi") as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            start = time.monotonic()
            self.assertEqual(client.receive(5), b"hi")
            self.assertLess(time.monotonic() - start, 1.0)
            client.close()

    def test_nothing_listening(self):
        with TestServer(echo) as server:
            port = server.port
        with self.assertRaises(OSError):
            ws.connect("127.0.0.1", port, timeout=2)


class Frames(unittest.TestCase):
    def test_frame_length_forms(self):
        mask = b"\x01\x02\x03\x04"
        self.assertEqual(ws.encode_frame(ws.OP_BINARY, b"", mask=mask), b"\x82\x80" + mask)
        self.assertEqual(ws.encode_frame(ws.OP_BINARY, b"a" * 125, mask=mask)[:2], b"\x82\xfd")
        self.assertEqual(ws.encode_frame(ws.OP_BINARY, b"a" * 126, mask=mask)[:4], b"\x82\xfe\x00\x7e")
        self.assertEqual(ws.encode_frame(ws.OP_BINARY, b"a" * 65536, mask=mask)[:10],
                         b"\x82\xff" + struct.pack(">Q", 65536))
        self.assertEqual(ws.encode_frame(ws.OP_TEXT, b"x", fin=False, mask=mask)[0], 0x01)

    def test_mask_is_xor_and_involution(self):
        mask = b"\xaa\x55\x0f\xf0"
        for tail in (b"", b"a", b"ab", b"abc"):
            payload = bytes(range(256)) * 3 + tail
            for numpy in (ws._np, None):  # with numpy (Blender) and without
                with self.subTest(tail=tail, numpy=numpy is not None), mock.patch.object(ws, "_np", numpy):
                    masked = ws.mask_payload(payload, mask)
                    self.assertEqual(masked, bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                    self.assertEqual(ws.mask_payload(masked, mask), payload)
        self.assertEqual(ws.mask_payload(b"xyz", mask), bytes(b ^ mask[i] for i, b in enumerate(b"xyz")))

    def test_all_payload_sizes_round_trip(self):
        with TestServer(echo) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            for size in [0, 1, 125, 126, 127, 65535, 65536, 300000]:
                data = bytes((i * 7) & 0xFF for i in range(size))
                client.send_binary(data)
                self.assertEqual(client.receive(5), data, size)
            client.send_text("héllo")
            self.assertEqual(client.receive(5), "héllo")
            client.close()


class Fragmentation(unittest.TestCase):
    def test_receives_fragmented_message_with_interleaved_ping(self):
        def behaviour(conn):
            conn.send_frame(ws.OP_BINARY, b"abc", fin=False)
            conn.send_frame(ws.OP_PING, b"p1")
            conn.send_frame(ws.OP_CONTINUATION, b"def", fin=False)
            conn.send_frame(ws.OP_CONTINUATION, b"ghi", fin=True)
            conn.read_message()  # reads the pong, then waits for close

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            self.assertEqual(client.receive(5), b"abcdefghi")
            client.close()
            time.sleep(0.05)
            self.assertEqual(server.connections[0].pongs, [b"p1"])

    def test_sends_large_message_fragmented(self):
        received = []

        def behaviour(conn):
            received.append(conn.read_message())
            conn.read_message()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5, fragment_size=1000)
            data = bytes(range(256)) * 10  # 2560 bytes -> 3 frames
            client.send_binary(data)
            client.close()
            conn = server.connections[0]
            self.assertEqual(received[0], (ws.OP_BINARY, data))
            data_frames = [f for f in conn.frames_seen if f[1] in (0, 2)]
            self.assertEqual([(f[0], f[1], f[3]) for f in data_frames],
                             [(False, 2, 1000), (False, 0, 1000), (True, 0, 560)])

    def test_continuation_without_start_is_a_protocol_error(self):
        def behaviour(conn):
            conn.send_frame(ws.OP_CONTINUATION, b"x")
            conn.read_message()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            with self.assertRaises(ws.ConnectionClosed) as ctx:
                client.receive(5)
            self.assertEqual(ctx.exception.code, 1002)
            time.sleep(0.05)
            self.assertEqual(struct.unpack(">H", server.connections[0].close_payload[:2])[0], 1002)


class ControlFrames(unittest.TestCase):
    def test_ping_gets_pong_with_same_payload(self):
        def behaviour(conn):
            conn.send_frame(ws.OP_PING, b"hello-ping")
            conn.read_message()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            self.assertEqual(client.poll(0.2), [])
            client.close()
            self.assertEqual(server.connections[0].pongs, [b"hello-ping"])

    def test_server_initiated_close_is_answered(self):
        def behaviour(conn):
            conn.send_binary(b"last")
            conn.send_close(4001, b"bye")
            conn.read_message()  # the client's close answer

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            self.assertEqual(client.receive(5), b"last")
            with self.assertRaises(ws.ConnectionClosed) as ctx:
                client.receive(5)
            self.assertEqual((ctx.exception.code, ctx.exception.reason), (4001, "bye"))
            time.sleep(0.05)
            self.assertEqual(struct.unpack(">H", server.connections[0].close_payload)[0], 4001)

    def test_client_close_handshake(self):
        def behaviour(conn):
            self.assertIsNone(conn.read_message())
            conn.send_close(1000)

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            start = time.monotonic()
            client.close()
            self.assertLess(time.monotonic() - start, 0.9, "close returns on the server's answer, not the timeout")
            self.assertTrue(client.closed)
            self.assertEqual(struct.unpack(">H", server.connections[0].close_payload)[0], 1000)
            self.assertEqual(server.errors, [])
            with self.assertRaises(ws.ConnectionClosed):
                client.send_binary(b"x")

    def test_masked_server_frame_is_rejected(self):
        def behaviour(conn):
            conn.send_frame(ws.OP_BINARY, b"x", mask=b"abcd")
            conn.read_message()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            with self.assertRaises(ws.ConnectionClosed) as ctx:
                client.receive(5)
            self.assertEqual(ctx.exception.code, 1002)

    def test_oversized_message_is_refused(self):
        def behaviour(conn):
            conn.send_binary(b"x" * 2000)
            conn.read_message()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5, max_message=1000)
            with self.assertRaises(ws.ConnectionClosed) as ctx:
                client.receive(5)
            self.assertEqual(ctx.exception.code, 1009)

    def test_server_vanishes(self):
        def behaviour(conn):
            conn.sock.close()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            with self.assertRaises(ws.ConnectionClosed) as ctx:
                client.receive(5)
            self.assertEqual(ctx.exception.code, 1006)


class NonBlocking(unittest.TestCase):
    def test_poll_returns_at_once_when_nothing_arrived(self):
        def behaviour(conn):
            conn.read_message()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            start = time.monotonic()
            for _ in range(100):
                self.assertEqual(client.poll(0), [])
            self.assertLess(time.monotonic() - start, 0.5)
            client.close()

    def test_poll_collects_several_messages_and_partial_frames(self):
        def behaviour(conn):
            frame = b"\x82\x05hello"
            conn.sock.sendall(frame[:3])
            time.sleep(0.1)
            conn.sock.sendall(frame[3:] + b"\x82\x01A\x82\x01B")
            conn.read_message()

        with TestServer(behaviour) as server:
            client = ws.connect("127.0.0.1", server.port, timeout=5)
            got = []
            deadline = time.monotonic() + 5
            while len(got) < 3 and time.monotonic() < deadline:
                got += client.poll(0.05)
            self.assertEqual(got, [b"hello", b"A", b"B"])
            client.close()


if __name__ == "__main__":
    unittest.main()
