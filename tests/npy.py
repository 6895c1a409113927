"""Minimal .npy reading and writing (C order, little-endian) without numpy, plus the element
encodings of `tlc run`: f16 through struct's 'e', bf16 and fp8 as raw bits."""
import ast
import math
import struct

MAGIC = b"\x93NUMPY"

# struct format of each .npy descr this module reads and writes.
FORMATS = {"<f8": "d", "<f4": "f", "<f2": "e", "<u2": "H", "|u1": "B", "|i1": "b", "<i2": "h",
           "<i4": "i", "<i8": "q", "<u4": "I", "|b1": "?"}

# The .npy descr `tlc run` expects for each tl dtype.
DESCR = {"f64": "<f8", "f32": "<f4", "f16": "<f2", "bf16": "<u2", "f8e4m3": "|u1", "f8e5m2": "|u1",
         "i8": "|i1", "u8": "|u1", "i16": "<i2", "i32": "<i4", "i64": "<i8", "u32": "<u4", "bool": "|b1"}


def write_npy(path, descr, shape, values):
    """Writes `values` (flat, C order) as a version 1.0 .npy file of element type `descr`."""
    count = math.prod(shape)
    if len(values) != count:
        raise ValueError(f"{len(values)} values for shape {tuple(shape)}")
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(int(n) for n in shape)!r}, }}"
    # The magic, version and length take 10 bytes; pad so that the data starts 64-byte aligned.
    pad = (-(10 + len(header) + 1)) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(MAGIC + b"\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack(f"<{count}{FORMATS[descr]}", *values))


def read_npy(path):
    """(descr, shape, flat values) of a .npy file: floats, ints or bools as its descr says."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != MAGIC:
        raise ValueError(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["fortran_order"]:
        raise ValueError(f"{path}: Fortran order")
    descr, shape = header["descr"], tuple(header["shape"])
    count = math.prod(shape)
    body = data[start + length:]
    values = list(struct.unpack(f"<{count}{FORMATS[descr]}", body[:count * struct.calcsize(FORMATS[descr])]))
    return descr, shape, values


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bf16_from_f32(x):
    """The bf16 bits of `x` (rounded to f32 first), to nearest even; NaN stays a quiet NaN."""
    if math.isnan(x):
        return 0x7FC0
    bits = f32_bits(x)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def bf16_to_float(bits):
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


def quantize(dtype, x):
    """`x` rounded to the nearest value of tl dtype `dtype` (floats only; ints pass through)."""
    if dtype == "f64":
        return float(x)
    if dtype == "f32":
        return struct.unpack("<f", struct.pack("<f", x))[0]
    if dtype == "f16":
        return struct.unpack("<e", struct.pack("<e", x))[0]
    if dtype == "bf16":
        return bf16_to_float(bf16_from_f32(x))
    return x


def encode(dtype, values):
    """The .npy descr and raw elements that hold `values` as tl dtype `dtype`."""
    if dtype == "bf16":
        return DESCR[dtype], [bf16_from_f32(v) for v in values]
    return DESCR[dtype], list(values)          # fp8: `values` are the raw bits


def decode(dtype, descr, raw):
    """The values of tl dtype `dtype` that a file of element type `descr` holds (fp8: raw bits)."""
    if descr != DESCR[dtype]:
        raise ValueError(f"expected descr {DESCR[dtype]} for {dtype}, got {descr}")
    if dtype == "bf16":
        return [bf16_to_float(b) for b in raw]
    return raw


def save(path, dtype, shape, values):
    descr, raw = encode(dtype, values)
    write_npy(path, descr, shape, raw)


def load(path, dtype):
    """(shape, values) of a file written as tl dtype `dtype`."""
    descr, shape, raw = read_npy(path)
    return shape, decode(dtype, descr, raw)
