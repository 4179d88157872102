#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Sends hand-made RC packets to DST (UDP 4791) through a raw IPv4 socket,
at the QPs of verbs/rc_sink (each expecting PSN 0, one 64 KiB MR with every
remote right at ADDR with RKEY).  QP 0 gets a WRITE beyond the expected PSN,
the one good WRITE ("softrma-good-wr!" at ADDR), a storm of READs and a
duplicate of the good WRITE with other data; it must stay in RTS.  Each
other QP gets one request it must refuse: bad rkey, a range past the end of
the MR, a DMA length of 2 GiB, a WRITE that starts in the middle, a FIRST
packet shorter than the MTU, an unaligned atomic, a READ of 2 GiB.

usage: craft_rc.py SRC DST RKEY ADDR QPN0 .. QPN7"""
import socket
import struct
import sys

from roce import bth, packet

WRITE_FIRST, WRITE_MIDDLE, WRITE_ONLY = 0x06, 0x07, 0x0a
READ_REQ, FETCH_ADD = 0x0c, 0x14
ACKREQ = 0x80000000
READS, READ_LEN = 50, 64 << 10


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def atmeth(va, rkey, add):
    return struct.pack('!QIQQ', va, rkey, add, 0)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    rkey, addr = int(sys.argv[3]), int(sys.argv[4])
    qpn = [int(q) for q in sys.argv[5:13]]
    good, dup = b'softrma-good-wr!', b'softrma-dupl-wr!'
    q0 = [
        ('WRITE beyond the expected PSN',
         bth(WRITE_ONLY, qpn[0], 5) + reth(addr, rkey, 16) + b'softrma-early-w!'),
        ('the good WRITE', bth(WRITE_ONLY, qpn[0], 0) + reth(addr, rkey, 16) + good),
    ]
    q0 += [(f'READ {i} of the storm',
            bth(READ_REQ, qpn[0], 1 + i * (READ_LEN // 1024) | ACKREQ) +
            reth(addr, rkey, READ_LEN)) for i in range(READS)]
    q0 += [('a duplicate of the good WRITE, other data',
            bth(WRITE_ONLY, qpn[0], 0) + reth(addr, rkey, 16) + dup)]
    refused = [
        ('WRITE with a bad rkey', bth(WRITE_ONLY, qpn[1]) + reth(addr, rkey ^ 0x80, 16) + dup),
        ('WRITE past the end of the MR',
         bth(WRITE_ONLY, qpn[2]) + reth(addr + (64 << 10) - 8, rkey, 16) + dup),
        ('WRITE with a DMA length of 2 GiB',
         bth(WRITE_ONLY, qpn[3]) + reth(addr, rkey, 1 << 31) + dup),
        ('WRITE that starts with a MIDDLE packet', bth(WRITE_MIDDLE, qpn[4]) + dup * 64),
        ('WRITE FIRST shorter than the MTU',
         bth(WRITE_FIRST, qpn[5]) + reth(addr, rkey, 4096) + dup * 6 + b'abcd'),
        ('unaligned FETCH_ADD', bth(FETCH_ADD, qpn[6], 0 | ACKREQ) + atmeth(addr + 4, rkey, 1)),
        ('READ of 2 GiB', bth(READ_REQ, qpn[7], 0 | ACKREQ) + reth(addr, rkey, 1 << 31)),
    ]
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for ident, (what, transport) in enumerate(q0 + refused, 1):
        sock.sendto(packet(src, dst, transport, ident & 0xffff), (dst, 0))
        if 'storm' not in what or what.startswith('READ 0 '):
            print(f'# sent: {what}', file=sys.stderr)


main()
