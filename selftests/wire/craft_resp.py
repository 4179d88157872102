#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The peer of verbs/sqd's "crafted" case, from SRC to DST (UDP 4791)
through a raw IPv4 socket: the four responses (MTU 1024) of the READ at
PSNs 0..3 to QPN, with stale responses in between (the PSN before the
READ's, a FIRST again, a MIDDLE again), then an ACK of PSN 4, the SEND
after it.  Response byte i is (i * 13 + 5) & 0xff.

usage: craft_resp.py SRC DST QPN"""
import socket
import struct
import sys

from roce import bth, packet

FIRST, MIDDLE, LAST, ONLY, ACK = 0x0d, 0x0e, 0x0f, 0x10, 0x11


def aeth(msn):
    return struct.pack('!I', msn)		# syndrome 0: ACK


def main():
    src, dst, qpn = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = bytes((i * 13 + 5) & 0xff for i in range(4096))
    chunk = [data[i * 1024:(i + 1) * 1024] for i in range(4)]
    stale = b'\xee' * 1024
    pkts = [
        ('an ONLY response at the PSN before the READ',
         bth(ONLY, qpn, 0xffffff) + aeth(0) + stale),
        ('FIRST', bth(FIRST, qpn, 0) + aeth(1) + chunk[0]),
        ('FIRST again, other data', bth(FIRST, qpn, 0) + aeth(1) + stale),
        ('MIDDLE', bth(MIDDLE, qpn, 1) + chunk[1]),
        ('MIDDLE at PSN 1 again, other data', bth(MIDDLE, qpn, 1) + stale),
        ('MIDDLE', bth(MIDDLE, qpn, 2) + chunk[2]),
        ('LAST', bth(LAST, qpn, 3) + aeth(1) + chunk[3]),
        ('LAST again, other data', bth(LAST, qpn, 3) + aeth(1) + stale),
        ('ACK of the SEND', bth(ACK, qpn, 4) + aeth(2)),
    ]
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for ident, (what, transport) in enumerate(pkts, 1):
        sock.sendto(packet(src, dst, transport, ident), (dst, 0))
        print(f'# sent: {what}', file=sys.stderr)


main()
