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
# name -> (offset, struct format) of every header integer.
FIELDS = {
    "format_version": (8, "<I"), "header_size": (12, "<I"), "flags": (22, "<H"),
    "graph_offset": (24, "<Q"), "graph_size": (32, "<Q"), "data_offset": (40, "<Q"), "data_size": (48, "<Q"),
    "graph_checksum": (56, "<Q"), "data_checksum": (64, "<Q"), "file_size": (72, "<Q"),
}


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def checksum(data):
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


def field(raw, name):
    offset, fmt = FIELDS[name]
    return struct.unpack_from(fmt, raw, offset)[0]


def seal_header(raw):
    struct.pack_into("<Q", raw, 88, checksum(raw[:88]))


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
              "data_size": len(data), "graph_checksum": checksum(text), "data_checksum": checksum(data),
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
