"""msgpack subset: exact bytes for every size variant, round trips, malformed input, and interop with msgpackr (Node)."""

import json
import math
import os
import shutil
import struct
import subprocess
import unittest

import support  # noqa: F401  (sets sys.path)
from blender_addon.msgpack import Float32, MsgpackError, packb, unpackb


class EncodingBytes(unittest.TestCase):
    """The encoder picks the shortest form, at every size boundary."""

    def test_nil_bool(self):
        self.assertEqual(packb(None), b"\xc0")
        self.assertEqual(packb(True), b"\xc3")
        self.assertEqual(packb(False), b"\xc2")

    def test_int_boundaries(self):
        cases = [
            (0, b"\x00"), (127, b"\x7f"), (128, b"\xcc\x80"), (255, b"\xcc\xff"), (256, b"\xcd\x01\x00"),
            (65535, b"\xcd\xff\xff"), (65536, b"\xce\x00\x01\x00\x00"), (2**32 - 1, b"\xce\xff\xff\xff\xff"),
            (2**32, b"\xcf\x00\x00\x00\x01\x00\x00\x00\x00"), (2**64 - 1, b"\xcf" + b"\xff" * 8),
            (-1, b"\xff"), (-32, b"\xe0"), (-33, b"\xd0\xdf"), (-128, b"\xd0\x80"), (-129, b"\xd1\xff\x7f"),
            (-32768, b"\xd1\x80\x00"), (-32769, b"\xd2\xff\xff\x7f\xff"), (-2**31, b"\xd2\x80\x00\x00\x00"),
            (-2**31 - 1, b"\xd3\xff\xff\xff\xff\x7f\xff\xff\xff"), (-2**63, b"\xd3\x80" + b"\x00" * 7),
        ]
        for value, expected in cases:
            with self.subTest(value=value):
                self.assertEqual(packb(value), expected)
                self.assertEqual(unpackb(expected), value)

    def test_int_out_of_range(self):
        with self.assertRaises(MsgpackError):
            packb(2**64)
        with self.assertRaises(MsgpackError):
            packb(-2**63 - 1)

    def test_floats(self):
        self.assertEqual(packb(1.5), b"\xcb" + struct.pack(">d", 1.5))
        self.assertEqual(packb(Float32(1.5)), b"\xca" + struct.pack(">f", 1.5))
        self.assertEqual(unpackb(b"\xca" + struct.pack(">f", 0.25)), 0.25)
        self.assertTrue(math.isnan(unpackb(b"\xcb" + struct.pack(">d", float("nan")))))

    def test_str_sizes(self):
        self.assertEqual(packb(""), b"\xa0")
        self.assertEqual(packb("a" * 31), b"\xbf" + b"a" * 31)
        self.assertEqual(packb("a" * 32), b"\xd9\x20" + b"a" * 32)
        self.assertEqual(packb("a" * 255)[:2], b"\xd9\xff")
        self.assertEqual(packb("a" * 256)[:3], b"\xda\x01\x00")
        self.assertEqual(packb("a" * 65536)[:5], b"\xdb\x00\x01\x00\x00")
        self.assertEqual(packb("é"), b"\xa2\xc3\xa9")

    def test_bin_sizes(self):
        self.assertEqual(packb(b""), b"\xc4\x00")
        self.assertEqual(packb(b"\x01" * 255)[:2], b"\xc4\xff")
        self.assertEqual(packb(b"\x01" * 256)[:3], b"\xc5\x01\x00")
        self.assertEqual(packb(bytearray(65536))[:5], b"\xc6\x00\x01\x00\x00")
        self.assertEqual(packb(memoryview(b"abc")), b"\xc4\x03abc")

    def test_array_sizes(self):
        self.assertEqual(packb([]), b"\x90")
        self.assertEqual(packb([0] * 15), b"\x9f" + b"\x00" * 15)
        self.assertEqual(packb([0] * 16), b"\xdc\x00\x10" + b"\x00" * 16)
        self.assertEqual(packb((0,) * 65536)[:5], b"\xdd\x00\x01\x00\x00")

    def test_map_sizes(self):
        self.assertEqual(packb({}), b"\x80")
        self.assertEqual(packb({"a": 1}), b"\x81\xa1a\x01")
        big16 = {i: 0 for i in range(16)}
        self.assertEqual(packb(big16)[:3], b"\xde\x00\x10")
        big32 = {i: 0 for i in range(65536)}
        self.assertEqual(packb(big32)[:5], b"\xdf\x00\x01\x00\x00")

    def test_unsupported_type(self):
        with self.assertRaises(MsgpackError):
            packb({1, 2})
        with self.assertRaises(MsgpackError):
            packb(object())


class RoundTrip(unittest.TestCase):
    def test_nested(self):
        value = {
            "kind": "rig", "id": "job-1", "n": -5, "big": 2**40, "f": 0.1, "ok": True, "none": None,
            "objects": [{"name": "Body", "positions": b"\x00\x00\x80\x3f" * 3, "list": list(range(20))}],
            "long": "x" * 300, "bins": [bytes(70000)], "map": {str(i): i for i in range(20)},
        }
        self.assertEqual(unpackb(packb(value)), value)

    def test_decoded_sized_forms_the_encoder_does_not_choose(self):
        # Other encoders may use a longer form than needed: the decoder must accept every variant.
        self.assertEqual(unpackb(b"\xd9\x01a"), "a")
        self.assertEqual(unpackb(b"\xda\x00\x01a"), "a")
        self.assertEqual(unpackb(b"\xdb\x00\x00\x00\x01a"), "a")
        self.assertEqual(unpackb(b"\xc5\x00\x01z"), b"z")
        self.assertEqual(unpackb(b"\xc6\x00\x00\x00\x01z"), b"z")
        self.assertEqual(unpackb(b"\xdc\x00\x01\x01"), [1])
        self.assertEqual(unpackb(b"\xdd\x00\x00\x00\x01\x01"), [1])
        self.assertEqual(unpackb(b"\xde\x00\x01\xa1k\x02"), {"k": 2})
        self.assertEqual(unpackb(b"\xdf\x00\x00\x00\x01\xa1k\x02"), {"k": 2})
        self.assertEqual(unpackb(b"\xcc\x05"), 5)
        self.assertEqual(unpackb(b"\xd3" + struct.pack(">q", 7)), 7)

    def test_accepts_bytearray_and_memoryview(self):
        self.assertEqual(unpackb(bytearray(b"\x92\x01\x02")), [1, 2])
        self.assertEqual(unpackb(memoryview(b"\x92\x01\x02")), [1, 2])


class Malformed(unittest.TestCase):
    def test_truncated(self):
        for data in [b"", b"\xcd\x01", b"\xa3ab", b"\xc4\x05abc", b"\x92\x01", b"\x81\xa1a", b"\xdd\xff\xff\xff\xff"]:
            with self.subTest(data=data):
                with self.assertRaises(MsgpackError):
                    unpackb(data)

    def test_trailing_bytes(self):
        with self.assertRaises(MsgpackError):
            unpackb(b"\x01\x02")

    def test_reserved_and_ext(self):
        for data in [b"\xc1", b"\xd4\x01\x00", b"\xc7\x01\x01\x00"]:
            with self.subTest(data=data):
                with self.assertRaises(MsgpackError):
                    unpackb(data)

    def test_bad_utf8(self):
        with self.assertRaises(MsgpackError):
            unpackb(b"\xa1\xff")

    def test_unhashable_key(self):
        with self.assertRaises(MsgpackError):
            unpackb(b"\x81\x90\x01")

    def test_too_deep(self):
        with self.assertRaises(MsgpackError):
            unpackb(b"\x91" * 100 + b"\x00")


NODE = shutil.which("node")
MSGPACKR = os.path.join(support.REPO_ROOT, "node_modules", "msgpackr")


@unittest.skipUnless(NODE and os.path.isdir(MSGPACKR), "node and node_modules/msgpackr are needed for the interop test")
class InteropWithMsgpackr(unittest.TestCase):
    """The sidecar speaks msgpackr: what it packs we must read, and what we pack it must read back the same."""

    SCRIPT = r"""
import { Packr } from 'msgpackr';
const packr = new Packr({ useRecords: false });
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const input = packr.unpack(Buffer.concat(chunks));
  const f32 = new Float32Array([1.5, -2.25, 3]);
  const u16 = new Uint16Array([1, 65535]);
  const out = {
    kind: 'result', id: input.id, echo: input, neg: -70000, big: 2 ** 40, frac: 0.1, nil: null,
    f32: Buffer.from(f32.buffer), u16: Buffer.from(u16.buffer), list: Array.from({ length: 20 }, (_, i) => i),
    positionsLength: input.positions.length, names: ['mixamorig:Hips', 'é'],
  };
  process.stdout.write(packr.pack(out));
});
"""

    def test_both_directions(self):
        request = {"kind": "rig", "id": "r1", "positions": bytes(range(12)), "n": 300, "x": -1.25, "flag": False,
                   "objects": [{"name": "Body"}] * 17}
        proc = subprocess.run([NODE, "--input-type=module", "-e", self.SCRIPT], input=packb(request),
                              capture_output=True, cwd=support.REPO_ROOT, timeout=30)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        reply = unpackb(proc.stdout)
        self.assertEqual(reply["id"], "r1")
        self.assertEqual(reply["echo"]["n"], 300)
        self.assertEqual(reply["echo"]["x"], -1.25)
        self.assertIs(reply["echo"]["flag"], False)
        self.assertEqual(len(reply["echo"]["objects"]), 17)
        self.assertEqual(reply["positionsLength"], 12)
        self.assertEqual(reply["neg"], -70000)
        self.assertEqual(reply["big"], 2**40)
        self.assertAlmostEqual(reply["frac"], 0.1)
        self.assertIsNone(reply["nil"])
        self.assertEqual(struct.unpack("<3f", reply["f32"]), (1.5, -2.25, 3.0))
        self.assertEqual(struct.unpack("<2H", reply["u16"]), (1, 65535))
        self.assertEqual(reply["list"], list(range(20)))
        self.assertEqual(reply["names"], ["mixamorig:Hips", "é"])


if __name__ == "__main__":
    unittest.main()
