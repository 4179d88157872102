#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Sends hand-made RC packets to DST (UDP 4791) through a raw IPv4 socket, at
the QPs of verbs/rc_sink (each expecting PSN 0, one 64 KiB MR with every
remote right at ADDR with RKEY). QP 0 gets a WRITE at the expected PSN from
another source address (dropped: not the QP's peer), a WRITE beyond the
expected PSN, the one good WRITE ("softrma-good-wr!" at ADDR), a storm of
12 READs (with the ATOMIC WRITE and FLUSHes that follow, within the QP's 16
responder resources), an ATOMIC WRITE of the same first 8 bytes, a FLUSH
with the IBA's ICRC, one with rdma_rxe's, one with a wrong ICRC (dropped),
the good WRITE again at the next PSN (executed only if both good FLUSHes
were); once softrma device DEV has sent their answers, duplicates of the
ATOMIC WRITE and the good WRITE with other data, and duplicate READs: three that ask for what no READ was accepted for
(another range of the first READ's PSN, another key, the good WRITE's PSN),
not answered, and the last packet of the first READ again, answered; it
must stay in RTS. Each other QP gets one request it must refuse: bad rkey, a
range past the end of the MR, a DMA length of 2 GiB, a WRITE that starts in
the middle, a FIRST packet shorter than the MTU, an unaligned atomic, a READ
of 4 GiB - 1, an unaligned ATOMIC WRITE, an ATOMIC WRITE whose RETH says 16
bytes, one that carries 16 bytes, a FLUSH with a bad rkey, a FLUSH of
placement type 3.

usage: craft_rc.py SRC DST RKEY ADDR QPN0 .. QPN12 DEV"""
import socket
import struct
import subprocess
import sys
import time

from roce import bth, icrc_rxe_flush, packet

WRITE_FIRST, WRITE_MIDDLE, WRITE_ONLY = 0x06, 0x07, 0x0a
READ_REQ, FETCH_ADD, FLUSH, ATOMIC_WRITE = 0x0c, 0x14, 0x1c, 0x1d
ACKREQ = 0x80000000
READS, READ_LEN = 12, 64 << 10
STRANGER = '10.9.0.77'


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def feth(placement, selectivity=0):
    return struct.pack('!I', selectivity << 4 | placement)


def atmeth(va, rkey, add):
    return struct.pack('!QIQQ', va, rkey, add, 0)


def sent_pkts(dev):
    out = subprocess.run(['rdma', 'statistic', 'show', 'link', dev + '/1'],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[out.index('sent_pkts') + 1])


def wait_sent(dev, since, count):
    """Waits (60 s at most) until DEV has sent COUNT packets since SINCE."""
    for _ in range(600):
        if sent_pkts(dev) - since >= count:
            return
        time.sleep(0.1)
    sys.exit(f'{dev} sent {sent_pkts(dev) - since} packets, not {count}')


def main():
    src, dst = sys.argv[1], sys.argv[2]
    rkey, addr = int(sys.argv[3]), int(sys.argv[4])
    qpn = [int(q) for q in sys.argv[5:18]]
    dev = sys.argv[18]
    good, dup = b'softrma-good-wr!', b'softrma-dupl-wr!'
    q0 = [
        ('WRITE at the expected PSN from another address',
         bth(WRITE_ONLY, qpn[0], 0) + reth(addr, rkey, 16) + dup, {'src': STRANGER}),
        ('WRITE beyond the expected PSN',
         bth(WRITE_ONLY, qpn[0], 5) + reth(addr, rkey, 16) + b'softrma-early-w!'),
        ('the good WRITE', bth(WRITE_ONLY, qpn[0], 0) + reth(addr, rkey, 16) + good),
    ]
    q0 += [(f'READ {i} of the storm',
            bth(READ_REQ, qpn[0], 1 + i * (READ_LEN // 1024) | ACKREQ) +
            reth(addr, rkey, READ_LEN)) for i in range(READS)]
    psn = 1 + READS * (READ_LEN // 1024)
    q0 += [
        ('ATOMIC WRITE of the same 8 bytes',
         bth(ATOMIC_WRITE, qpn[0], psn | ACKREQ) + reth(addr, rkey, 8) + good[:8]),
        ('FLUSH, the IBA\'s ICRC',
         bth(FLUSH, qpn[0], psn + 1 | ACKREQ) + feth(1) + reth(addr, rkey, 64)),
        ('FLUSH, rdma_rxe\'s ICRC',
         bth(FLUSH, qpn[0], psn + 2 | ACKREQ) + feth(1, 1) + reth(0, rkey, 0),
         {'icrc_of': icrc_rxe_flush}),
        ('FLUSH, a wrong ICRC',
         bth(FLUSH, qpn[0], psn + 3 | ACKREQ) + feth(1) + reth(addr, rkey, 64),
         {'good_icrc': False}),
        ('the good WRITE again, at the PSN after the FLUSHes',
         bth(WRITE_ONLY, qpn[0], psn + 3) + reth(addr, rkey, 16) + good),
    ]
    # The storm's, ATOMIC WRITE's and FLUSHes' answers, and a sequence NAK.
    answers = READS * (READ_LEN // 1024) + 1 + 2 + 1
    q0_dup = [
        ('a duplicate of the ATOMIC WRITE, other data',
         bth(ATOMIC_WRITE, qpn[0], psn | ACKREQ) + reth(addr, rkey, 8) + dup[:8]),
        ('a duplicate of the good WRITE, other data',
         bth(WRITE_ONLY, qpn[0], 0) + reth(addr, rkey, 16) + dup),
        ('a duplicate READ at the first READ\'s PSN, another range',
         bth(READ_REQ, qpn[0], 1 | ACKREQ) + reth(addr + 1024, rkey, 1024)),
        ('a duplicate READ at the first READ\'s PSN, another key',
         bth(READ_REQ, qpn[0], 1 | ACKREQ) + reth(addr, rkey ^ 0x80, READ_LEN)),
        ('a duplicate READ at the good WRITE\'s PSN',
         bth(READ_REQ, qpn[0], 0 | ACKREQ) + reth(addr, rkey, 1024)),
        ('the last packet of the first READ again',
         bth(READ_REQ, qpn[0], 64 | ACKREQ) + reth(addr + READ_LEN - 1024, rkey, 1024)),
    ]
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
        ('READ of 4 GiB - 1',
         bth(READ_REQ, qpn[7], 0 | ACKREQ) + reth(addr, rkey, (1 << 32) - 1)),
        ('unaligned ATOMIC WRITE',
         bth(ATOMIC_WRITE, qpn[8], 0 | ACKREQ) + reth(addr + 4, rkey, 8) + dup[:8]),
        ('ATOMIC WRITE whose RETH says 16 bytes',
         bth(ATOMIC_WRITE, qpn[9], 0 | ACKREQ) + reth(addr, rkey, 16) + dup[:8]),
        ('ATOMIC WRITE of 16 bytes',
         bth(ATOMIC_WRITE, qpn[10], 0 | ACKREQ) + reth(addr, rkey, 8) + dup),
        ('FLUSH with a bad rkey',
         bth(FLUSH, qpn[11], 0 | ACKREQ) + feth(1) + reth(addr, rkey ^ 0x80, 64)),
        ('FLUSH of placement type 3',
         bth(FLUSH, qpn[12], 0 | ACKREQ) + feth(3) + reth(addr, rkey, 64)),
    ]
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    since = sent_pkts(dev)
    for ident, (what, transport, *kw) in enumerate(q0 + q0_dup + refused, 1):
        if what == q0_dup[0][0]:
            wait_sent(dev, since, answers)
        kw = dict(kw[0]) if kw else {}
        sender = kw.pop('src', src)
        sock.sendto(packet(sender, dst, transport, ident & 0xffff, **kw), (dst, 0))
        if 'storm' not in what or what.startswith('READ 0 '):
            print(f'# sent: {what}', file=sys.stderr)


if __name__ == "__main__":
    main()
