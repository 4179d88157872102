#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Sends COUNT UDP datagrams of SIZE bytes to DST port 4791 as fast as it
can: an RC SEND_ONLY header to a QP nobody has, then zeros, no valid ICRC.

usage: flood.py DST COUNT SIZE"""
import socket
import sys

from roce import bth

SEND_ONLY = 0x04


def main():
    dst, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    header = bth(SEND_ONLY, 0x1000)
    datagram = header + bytes(size - len(header))
    for _ in range(count):
        try:
            sock.sendto(datagram, (dst, 4791))
        except OSError:
            pass


main()
