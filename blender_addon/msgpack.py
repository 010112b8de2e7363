"""MessagePack encoder/decoder: the subset the AutoRig protocol uses (standard library only).

Covered: nil, bool, int (every fixed and sized variant up to 64 bits), float32/float64, str, bin, array, map,
each in all of its size variants. Ext types are rejected: the protocol never sends them.
Typed arrays travel as ``bin`` holding raw little-endian values, so a decoded ``bin`` is returned as ``bytes``.
"""

import struct

__all__ = ["MsgpackError", "Float32", "packb", "unpackb"]


class MsgpackError(ValueError):
    """Raised on bytes that are not valid msgpack of the supported subset, or on values that cannot be encoded."""


class Float32(float):
    """A float that should be written as msgpack float32 (plain Python floats are written as float64)."""


_MAX_DEPTH = 64

_U8 = struct.Struct(">B")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_F32 = struct.Struct(">f")
_F64 = struct.Struct(">d")


def packb(value):
    """Encode one value to msgpack bytes.

    value: None | bool | int | float | Float32 | str | bytes/bytearray/memoryview | list/tuple | dict (keys of the same kinds).
    Returns bytes.
    """
    out = []
    _pack(value, out, 0)
    return b"".join(out)


def _pack(value, out, depth):
    if depth > _MAX_DEPTH:
        raise MsgpackError("value nested too deeply")
    if value is None:
        out.append(b"\xc0")
    elif value is True:
        out.append(b"\xc3")
    elif value is False:
        out.append(b"\xc2")
    elif isinstance(value, int):
        out.append(_pack_int(value))
    elif isinstance(value, Float32):
        out.append(b"\xca" + _F32.pack(value))
    elif isinstance(value, float):
        out.append(b"\xcb" + _F64.pack(value))
    elif isinstance(value, str):
        data = value.encode("utf-8")
        out.append(_sized_header(len(data), 0xA0, 31, b"\xd9", b"\xda", b"\xdb"))
        out.append(data)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = value.tobytes() if isinstance(value, memoryview) else bytes(value)
        out.append(_sized_header(len(data), None, 0, b"\xc4", b"\xc5", b"\xc6"))
        out.append(data)
    elif isinstance(value, (list, tuple)):
        out.append(_sized_header(len(value), 0x90, 15, None, b"\xdc", b"\xdd"))
        for item in value:
            _pack(item, out, depth + 1)
    elif isinstance(value, dict):
        out.append(_sized_header(len(value), 0x80, 15, None, b"\xde", b"\xdf"))
        for key, item in value.items():
            _pack(key, out, depth + 1)
            _pack(item, out, depth + 1)
    else:
        raise MsgpackError("cannot encode a value of type %s" % type(value).__name__)


def _pack_int(n):
    """The shortest msgpack encoding of an integer (positive ints use the unsigned forms, as the spec recommends)."""
    if 0 <= n <= 0x7F:
        return _U8.pack(n)
    if -32 <= n < 0:
        return _I8.pack(n)
    if n > 0:
        if n <= 0xFF:
            return b"\xcc" + _U8.pack(n)
        if n <= 0xFFFF:
            return b"\xcd" + _U16.pack(n)
        if n <= 0xFFFFFFFF:
            return b"\xce" + _U32.pack(n)
        if n <= 0xFFFFFFFFFFFFFFFF:
            return b"\xcf" + _U64.pack(n)
        raise MsgpackError("integer too large for msgpack: %d" % n)
    if n >= -0x80:
        return b"\xd0" + _I8.pack(n)
    if n >= -0x8000:
        return b"\xd1" + _I16.pack(n)
    if n >= -0x80000000:
        return b"\xd2" + _I32.pack(n)
    if n >= -0x8000000000000000:
        return b"\xd3" + _I64.pack(n)
    raise MsgpackError("integer too small for msgpack: %d" % n)


def _sized_header(length, fix_base, fix_max, tag8, tag16, tag32):
    """Header of a str/bin/array/map of `length` items: fix form when it fits, else the 8/16/32-bit length forms."""
    if fix_base is not None and length <= fix_max:
        return _U8.pack(fix_base | length)
    if tag8 is not None and length <= 0xFF:
        return tag8 + _U8.pack(length)
    if length <= 0xFFFF:
        return tag16 + _U16.pack(length)
    if length <= 0xFFFFFFFF:
        return tag32 + _U32.pack(length)
    raise MsgpackError("object too large for msgpack: %d" % length)


def unpackb(data):
    """Decode exactly one msgpack value from `data` (bytes-like); trailing bytes are an error.

    Returns None/bool/int/float/str/bytes/list/dict (map keys must be hashable: str, int, bool, None, float, bytes).
    """
    reader = _Reader(data if isinstance(data, bytes) else bytes(data))
    value = reader.value(0)
    if reader.pos != len(reader.data):
        raise MsgpackError("%d trailing bytes after the msgpack value" % (len(reader.data) - reader.pos))
    return value


class _Reader:
    """A cursor over msgpack bytes; every read checks that the bytes it needs are there."""

    __slots__ = ("data", "pos")

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        end = self.pos + n
        if end > len(self.data):
            raise MsgpackError("truncated msgpack data (need %d bytes at offset %d)" % (n, self.pos))
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def unpack(self, st):
        end = self.pos + st.size
        if end > len(self.data):
            raise MsgpackError("truncated msgpack data at offset %d" % self.pos)
        (value,) = st.unpack_from(self.data, self.pos)
        self.pos = end
        return value

    def value(self, depth):
        if depth > _MAX_DEPTH:
            raise MsgpackError("msgpack value nested too deeply")
        tag = self.unpack(_U8)
        if tag <= 0x7F:
            return tag
        if tag >= 0xE0:
            return tag - 0x100
        if 0x80 <= tag <= 0x8F:
            return self.map(tag & 0x0F, depth)
        if 0x90 <= tag <= 0x9F:
            return self.array(tag & 0x0F, depth)
        if 0xA0 <= tag <= 0xBF:
            return self.str(tag & 0x1F)
        if tag == 0xC0:
            return None
        if tag == 0xC2:
            return False
        if tag == 0xC3:
            return True
        if tag == 0xC4:
            return self.take(self.unpack(_U8))
        if tag == 0xC5:
            return self.take(self.unpack(_U16))
        if tag == 0xC6:
            return self.take(self.unpack(_U32))
        if tag == 0xCA:
            return self.unpack(_F32)
        if tag == 0xCB:
            return self.unpack(_F64)
        if tag == 0xCC:
            return self.unpack(_U8)
        if tag == 0xCD:
            return self.unpack(_U16)
        if tag == 0xCE:
            return self.unpack(_U32)
        if tag == 0xCF:
            return self.unpack(_U64)
        if tag == 0xD0:
            return self.unpack(_I8)
        if tag == 0xD1:
            return self.unpack(_I16)
        if tag == 0xD2:
            return self.unpack(_I32)
        if tag == 0xD3:
            return self.unpack(_I64)
        if tag == 0xD9:
            return self.str(self.unpack(_U8))
        if tag == 0xDA:
            return self.str(self.unpack(_U16))
        if tag == 0xDB:
            return self.str(self.unpack(_U32))
        if tag == 0xDC:
            return self.array(self.unpack(_U16), depth)
        if tag == 0xDD:
            return self.array(self.unpack(_U32), depth)
        if tag == 0xDE:
            return self.map(self.unpack(_U16), depth)
        if tag == 0xDF:
            return self.map(self.unpack(_U32), depth)
        if tag in (0xC7, 0xC8, 0xC9, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8):
            raise MsgpackError("msgpack ext types are not supported (tag 0x%02x)" % tag)
        raise MsgpackError("invalid msgpack tag 0x%02x" % tag)

    def str(self, length):
        try:
            return self.take(length).decode("utf-8")
        except UnicodeDecodeError as err:
            raise MsgpackError("invalid UTF-8 in msgpack str: %s" % err) from None

    def array(self, length, depth):
        # Each item needs at least one byte: refuse lengths the data cannot hold before allocating.
        if length > len(self.data) - self.pos:
            raise MsgpackError("truncated msgpack array (%d items declared)" % length)
        return [self.value(depth + 1) for _ in range(length)]

    def map(self, length, depth):
        if 2 * length > len(self.data) - self.pos:
            raise MsgpackError("truncated msgpack map (%d entries declared)" % length)
        result = {}
        for _ in range(length):
            key = self.value(depth + 1)
            if isinstance(key, (list, dict)):
                raise MsgpackError("msgpack map key must not be an array or a map")
            result[key] = self.value(depth + 1)
        return result
