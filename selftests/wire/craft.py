#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Sends hand-made RoCEv2 packets to DST (UDP 4791) through a raw IPv4
socket: one good UD SEND to QPN with Q_Key QKEY and payload "softrma-good",
and bad ones, each marked with the counter it must move.  Prints the
expected counter deltas as "name value" lines.

usage: craft.py SRC DST QPN QKEY"""
import socket
import struct
import sys

from roce import bth, packet

UD_SEND_ONLY = 0x64
XRC_SEND_ONLY = 0xa4


def deth(qkey, sqpn=0x42):
    return struct.pack('!II', qkey, sqpn)


def main():
    src, dst, qpn, qkey = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4], 0)
    good = b'softrma-good'
    cases = [
        # (what, transport headers and payload, good ICRC, counter)
        ('good UD SEND', bth(UD_SEND_ONLY, qpn) + deth(qkey) + good, True, None),
        ('bad ICRC', bth(UD_SEND_ONLY, qpn) + deth(qkey) + b'bad-icrc....', False,
         'rcvd_icrc_err'),
        ('BTH cut short', bth(UD_SEND_ONLY, qpn)[:8], True, 'rcvd_malformed'),
        ('DETH cut short', bth(UD_SEND_ONLY, qpn) + deth(qkey)[:4], True, 'rcvd_malformed'),
        ('unknown opcode', bth(0x7f, qpn) + deth(qkey) + b'x' * 8, True, 'rcvd_malformed'),
        ('transport version 1', bth(UD_SEND_ONLY, qpn, flags=0x01) + deth(qkey), True,
         'rcvd_malformed'),
        ('pad larger than payload', bth(UD_SEND_ONLY, qpn, flags=0x30) + deth(qkey) + b'ab',
         True, 'rcvd_malformed'),
        ('unknown QPN', bth(UD_SEND_ONLY, 0xabcdef) + deth(qkey) + b'x' * 8, True,
         'rcvd_no_qp'),
        ('RC WRITE with a RETH into nowhere',
         bth(0x0a, qpn) + struct.pack('!QII', 0xffffffffffff0000, 0x1234, 8) + b'x' * 8,
         True, 'rcvd_no_qp'),
        ('wrong Q_Key', bth(UD_SEND_ONLY, qpn) + deth(qkey ^ 1) + b'wrong-qkey..', True,
         'rcvd_dropped'),
        ('XRC SEND to a UD QP', bth(XRC_SEND_ONLY, qpn) + struct.pack('!I', 1) + b'x' * 8,
         True, 'rcvd_no_qp'),
        ('XRCETH cut short', bth(XRC_SEND_ONLY, qpn) + b'\0\0', True, 'rcvd_malformed'),
    ]
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    expect = {'rcvd_pkts': 0}
    for ident, (what, transport, good_icrc, counter) in enumerate(cases, 1):
        sock.sendto(packet(src, dst, transport, ident, good_icrc), (dst, 0))
        expect['rcvd_pkts'] += 1
        if counter:
            expect[counter] = expect.get(counter, 0) + 1
        print(f'# sent: {what}', file=sys.stderr)
    for name, value in expect.items():
        print(name, value)


main()
