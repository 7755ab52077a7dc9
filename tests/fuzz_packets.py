#!/usr/bin/python3
"""Seed packets for the reader's fuzzer: the first N TracePackets of a trace,
one file each (fuzz_packets.py TRACE DIR N), so that mutations hit the
packet decoders (report/model/fastread.c and protobuf-c) directly."""
import gzip
import os
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


data = gzip.open(sys.argv[1]).read()
i = n = 0
while i < len(data) and n < int(sys.argv[3]):
    _, i = varint(data, i)
    size, i = varint(data, i)
    with open(os.path.join(sys.argv[2], "packet-%04d" % n), "wb") as f:
        f.write(data[i:i + size])
    i += size
    n += 1
