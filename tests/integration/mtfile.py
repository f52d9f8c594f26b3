#!/usr/bin/env python3
"""Crafts corrupt .mt files for the hostile-input tests: reads a model's header, JSON graph and data
section (layout and checksum as specified in man/mt-format.5) and writes a modified copy re-sealed with
valid checksums, so that the reader's deeper checks, not the checksum, are what a test exercises.

  mtfile.py boundaries IN                  section boundaries, one offset a line
  mtfile.py edit IN OUT 'PYTHON'           run PYTHON with g (the graph JSON) and data (bytearray)
                                           bound, then write OUT with valid checksums
  mtfile.py header IN OUT FIELD=VALUE...   set header fields (names below), re-seal the header only
  mtfile.py flip IN OUT OFFSET             xor one byte with 0x01, nothing re-sealed
"""
import json
import struct
import sys

MASK = (1 << 64) - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
HEADER_SIZE, ALIGN = 128, 64
FORMAT_VERSION = 5  # what mt writes; each file is sealed with its own version's checksum
# name -> (offset, struct format) of every header integer.
FIELDS = {
    "format_version": (8, "<I"), "header_size": (12, "<I"), "flags": (22, "<H"),
    "graph_offset": (24, "<Q"), "graph_size": (32, "<Q"), "data_offset": (40, "<Q"), "data_size": (48, "<Q"),
    "graph_checksum": (56, "<Q"), "data_checksum": (64, "<Q"), "file_size": (72, "<Q"),
}


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def checksum_multiply_rotate(data):
    """The checksum of formats 1 to 3."""
    lanes = [0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63]
    padded = bytes(data) + bytes(-len(data) % 32)
    for at in range(0, len(padded), 32):
        for i in range(4):
            word = struct.unpack_from("<Q", padded, at + 8 * i)[0]
            lanes[i] = rotl((lanes[i] + word * P2) & MASK, 31) * P1 & MASK
    h = (rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18)) & MASK
    h ^= len(data) * P3 & MASK
    h ^= h >> 33
    h = h * P2 & MASK
    h ^= h >> 29
    h = h * P3 & MASK
    h ^= h >> 32
    return h


def _crc_table():
    table = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(state, data):
    """CRC32C without the initial and final inversion (lib/format/checksum.h)."""
    for byte in data:
        state = (state >> 8) ^ CRC_TABLE[(state ^ byte) & 0xFF]
    return state


def crc32c_streams(streams):
    """crc32c(0xFFFFFFFF, s) of each byte string, vectorised with numpy (pure Python would take minutes on
    a model's weights): each stream is cut into chunks of L bytes whose CRCs from state 0 are computed side
    by side, then chained. CRC is linear over GF(2): crc(s, chunk) = shift(s) ^ crc(0, chunk), where
    shift(s) = crc(s, L zero bytes) is itself linear in s, so a xor of four 256-entry tables."""
    import numpy as np
    longest = max((len(s) for s in streams), default=0)
    chunk = max(64, int(longest ** 0.5) * 2)
    table = np.array(CRC_TABLE, dtype=np.uint32)
    bodies = [np.frombuffer(s, dtype=np.uint8)[:len(s) // chunk * chunk].reshape(-1, chunk) for s in streams]
    crcs = np.zeros(sum(len(b) for b in bodies), dtype=np.uint32)
    if len(crcs):
        body = np.concatenate(bodies)
        for j in range(chunk):
            crcs = table[(crcs ^ body[:, j]) & 0xFF] ^ (crcs >> 8)
    # shift of each single-bit state, then per byte position a 256-entry table.
    basis = np.array([1 << b for b in range(32)], dtype=np.uint32)
    for _ in range(chunk):
        basis = table[basis & 0xFF] ^ (basis >> 8)
    basis = [int(x) for x in basis]
    shift_tables = []
    for k in range(4):
        t = [0] * 256
        for v in range(1, 256):
            low = v & -v
            t[v] = t[v ^ low] ^ basis[8 * k + low.bit_length() - 1]
        shift_tables.append(t)
    results, at = [], 0
    for s, b in zip(streams, bodies):
        state = 0xFFFFFFFF
        for c in crcs[at:at + len(b)].tolist():
            state = (shift_tables[0][state & 0xFF] ^ shift_tables[1][(state >> 8) & 0xFF] ^
                     shift_tables[2][(state >> 16) & 0xFF] ^ shift_tables[3][state >> 24] ^ c)
        at += len(b)
        results.append(crc32c(state, s[len(b) * chunk:]))
    return results


def fmix64(x):
    x ^= x >> 33
    x = x * 0xFF51AFD7ED558CCD & MASK
    x ^= x >> 33
    x = x * 0xC4CEB9FE1A85EC53 & MASK
    return x ^ (x >> 33)


def checksum_crc32c_lanes(data):
    """The checksum of format 4 on: word k (8 bytes, little-endian) goes to CRC32C lane k mod 8, the bytes
    after the last whole word to the next lane; the lanes are summed through fmix64."""
    import numpy as np
    data = bytes(data)
    words = len(data) // 8
    by_word = np.frombuffer(data, dtype=np.uint8, count=8 * words).reshape(words, 8)
    streams = [by_word[i::8].tobytes() for i in range(8)]
    streams[words % 8] += data[8 * words:]
    total = 0
    for i, crc in enumerate(crc32c_streams(streams)):
        total = (total + fmix64(i << 32 | crc)) & MASK
    return fmix64(total ^ (len(data) * P3 & MASK))


def checksum(data, version=FORMAT_VERSION):
    return checksum_crc32c_lanes(data) if version >= 4 else checksum_multiply_rotate(data)


def field(raw, name):
    offset, fmt = FIELDS[name]
    return struct.unpack_from(fmt, raw, offset)[0]


def seal_header(raw):
    struct.pack_into("<Q", raw, 88, checksum(raw[:88], field(raw, "format_version")))


def read(path):
    raw = open(path, "rb").read()
    graph = json.loads(raw[field(raw, "graph_offset"):][:field(raw, "graph_size")])
    data = bytearray(raw[field(raw, "data_offset"):])
    return bytearray(raw[:HEADER_SIZE]), graph, data


def write(path, header, graph, data):
    text = json.dumps(graph, separators=(",", ":")).encode()
    data_offset = (HEADER_SIZE + len(text) + ALIGN - 1) // ALIGN * ALIGN
    data = bytes(data) + bytes(-len(data) % ALIGN)
    values = {"graph_offset": HEADER_SIZE, "graph_size": len(text), "data_offset": data_offset,
              "data_size": len(data), "graph_checksum": checksum(text, field(header, "format_version")),
              "data_checksum": checksum(data, field(header, "format_version")),
              "file_size": data_offset + len(data)}
    for name, value in values.items():
        offset, fmt = FIELDS[name]
        struct.pack_into(fmt, header, offset, value)
    seal_header(header)
    with open(path, "wb") as out:
        out.write(bytes(header) + text + bytes(data_offset - HEADER_SIZE - len(text)) + data)


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "boundaries":
        raw = open(argv[2], "rb").read()
        g_end = field(raw, "graph_offset") + field(raw, "graph_size")
        for at in sorted({8, 88, 96, HEADER_SIZE, g_end, field(raw, "data_offset"), len(raw) - 1}):
            print(at)
    elif command == "edit":
        header, g, data = read(argv[2])
        exec(argv[4], {"g": g, "data": data, "struct": struct})
        write(argv[3], header, g, data)
    elif command == "header":
        raw = bytearray(open(argv[2], "rb").read())
        for assignment in argv[4:]:
            name, value = assignment.split("=")
            offset, fmt = FIELDS[name]
            struct.pack_into(fmt, raw, offset, int(value, 0))
        seal_header(raw)
        open(argv[3], "wb").write(raw)
    elif command == "flip":
        raw = bytearray(open(argv[2], "rb").read())
        raw[int(argv[4])] ^= 0x01
        open(argv[3], "wb").write(raw)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
