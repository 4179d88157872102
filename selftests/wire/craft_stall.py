#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Starts two RC messages at the QPs of verbs/teardown's "stalled" case and
goes silent: a WRITE_FIRST whose RETH covers 8 KiB at ADDR with RKEY, at
QPN0, and a SEND_FIRST at QPN1, each one MTU (1024 bytes) at PSN 0, from
SRC to DST (UDP 4791) through a raw IPv4 socket.

usage: craft_stall.py SRC DST RKEY ADDR QPN0 QPN1"""
import socket
import struct
import sys

from roce import bth, packet

SEND_FIRST, WRITE_FIRST = 0x00, 0x06


def main():
    src, dst = sys.argv[1], sys.argv[2]
    rkey, addr, qpn0, qpn1 = (int(a) for a in sys.argv[3:7])
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    write = bth(WRITE_FIRST, qpn0) + struct.pack('!QII', addr, rkey, 8192) + b'w' * 1024
    send = bth(SEND_FIRST, qpn1) + b's' * 1024
    for ident, transport in enumerate((write, send), 1):
        sock.sendto(packet(src, dst, transport, ident), (dst, 0))
    print('# sent: WRITE_FIRST of 8 KiB, SEND_FIRST; then nothing', file=sys.stderr)


main()
