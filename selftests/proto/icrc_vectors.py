#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RoCEv2 packets with their ICRC computed by zlib, an implementation
independent of kernel/proto/roce.c: one hex packet per line, "4 " or "6 "
(the IP version) first.  IBA annex A17.8: CRC-32 over 8 bytes of ones, the
IP and UDP headers with their variant fields set to ones, the BTH with its
FECN/BECN byte set to ones, the rest of the headers and the payload; stored
little-endian."""
import random
import struct
import sys
import zlib


def ipv4(tos, ttl, length):
    h = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, tos, length, 0, 0x4000,
                              ttl, 17, 0, bytes([10, 9, 0, 1]),
                              bytes([10, 9, 0, 2])))
    s = sum(struct.unpack('!10H', bytes(h)))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    struct.pack_into('!H', h, 10, ~s & 0xffff)
    return bytes(h)


def ipv6(tclass, flow, hop, length):
    return struct.pack('!IHBB16s16s', 6 << 28 | tclass << 20 | flow, length,
                       17, hop, bytes(range(16)), bytes(range(16, 32)))


def masked(ip, udp, bth):
    ip = bytearray(ip)
    if ip[0] >> 4 == 4:
        ip[1] = 0xff
        ip[8] = 0xff
        ip[10:12] = b'\xff\xff'
    else:
        ip[0] |= 0x0f
        ip[1:4] = b'\xff\xff\xff'
        ip[7] = 0xff
    udp = bytearray(udp)
    udp[6:8] = b'\xff\xff'
    bth = bytearray(bth)
    bth[4] = 0xff
    return bytes(ip + udp + bth)


def packet(rnd, version):
    opcode = rnd.choice([0x04, 0x0a, 0x0c, 0x11, 0x64])
    ext = {0x04: b'', 0x0a: struct.pack('!QII', rnd.getrandbits(64), 0x1234, 0),
           0x0c: struct.pack('!QII', rnd.getrandbits(64), 0x4321, 64),
           0x11: struct.pack('!I', 0x1f000005),
           0x64: struct.pack('!II', 0x80010000, 1)}[opcode]
    payload = b'' if opcode in (0x0c, 0x11) else bytes(
        rnd.getrandbits(8) for _ in range(rnd.randrange(0, 300)))
    if opcode == 0x0a:
        ext = ext[:12] + struct.pack('!I', len(payload))
    pad = -len(payload) % 4
    bth = struct.pack('!BBHII', opcode, pad << 4, 0xffff,
                      rnd.randrange(1 << 24) | rnd.choice([0, 0xc0 << 24]),
                      rnd.randrange(1 << 24) | 0x80000000)
    body = ext + payload + bytes(pad)
    udp_len = 8 + len(bth) + len(body) + 4
    udp = struct.pack('!HHHH', 0xc000 | rnd.randrange(1 << 14), 4791, udp_len,
                      rnd.getrandbits(16))
    if version == 4:
        ip = ipv4(rnd.getrandbits(8), rnd.randrange(1, 256), 20 + udp_len)
    else:
        ip = ipv6(rnd.getrandbits(8), rnd.getrandbits(20),
                  rnd.randrange(1, 256), udp_len)
    icrc = zlib.crc32(b'\xff' * 8 + masked(ip, udp, bth) + body)
    return ip + udp + bth + body + struct.pack('<I', icrc)


def main():
    rnd = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 4791)
    for i in range(200):
        version = 4 if i % 2 else 6
        print(version, packet(rnd, version).hex())


main()
