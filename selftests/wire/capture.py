#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Captures RoCEv2 packets (UDP port 4791) on a netdev with a raw packet
socket and checks each one's ICRC with zlib, independently of softrma's own
implementation (a FLUSH may carry rdma_rxe's form of it: see roce.py).  Prints one line per packet, "4 <hex>" or "6 <hex>" (the IP
packet), for kernel/proto's checker (selftests/proto/roce_test --capture),
and a decoded summary on stderr.  Exits non-zero if an ICRC is wrong or too
few packets came.

usage: capture.py NETDEV COUNT [SECONDS]"""
import socket
import struct
import sys
import time

from roce import icrc_ok

ETH_P_ALL = 3


def roce_payload(frame):
    """The (version, IP packet, IP header length) of a RoCEv2 frame, or None."""
    ethertype = struct.unpack('!H', frame[12:14])[0]
    ip = frame[14:]
    if ethertype == 0x0800 and len(ip) >= 20 and ip[9] == 17:
        hlen = (ip[0] & 0xf) * 4
        total = struct.unpack('!H', ip[2:4])[0]
        ip = ip[:total]
    elif ethertype == 0x86dd and len(ip) >= 40 and ip[6] == 17:
        hlen = 40
        ip = ip[:40 + struct.unpack('!H', ip[4:6])[0]]
    else:
        return None
    if struct.unpack('!H', ip[hlen + 2:hlen + 4])[0] != 4791:
        return None
    return (4 if ethertype == 0x0800 else 6), ip, hlen


def main():
    dev, count = sys.argv[1], int(sys.argv[2])
    deadline = time.time() + (float(sys.argv[3]) if len(sys.argv) > 3 else 60)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    # A busy guest may schedule us late: room for a few thousand packets.
    # (SO_RCVBUF stops at net.core.rmem_max; as root the FORCE variant not.)
    sock.setsockopt(socket.SOL_SOCKET, getattr(socket, 'SO_RCVBUFFORCE', 33), 8 << 20)
    sock.bind((dev, 0))
    print(f'# capturing on {dev}', file=sys.stderr, flush=True)
    sock.settimeout(1)
    got = bad = 0
    while got < count and time.time() < deadline:
        try:
            frame = sock.recv(65535)
        except socket.timeout:
            continue
        found = roce_payload(frame)
        if not found:
            continue
        version, ip, hlen = found
        udp = ip[hlen:]
        ok = icrc_ok(ip[:hlen], udp)
        bad += not ok
        got += 1
        print(version, ip.hex(), flush=True)
        if got <= 4 or not ok:
            opcode, dqpn, psn = udp[8], struct.unpack('!I', udp[12:16])[0] & 0xffffff, \
                struct.unpack('!I', udp[16:20])[0] & 0xffffff
            print(f'# IPv{version} opcode 0x{opcode:02x} dqpn 0x{dqpn:06x} psn {psn} '
                  f'len {len(udp) - 8}: ICRC {"ok" if ok else "WRONG"}', file=sys.stderr)
    print(f'# captured {got} RoCEv2 packets, {bad} with a wrong ICRC (zlib)', file=sys.stderr)
    sys.exit(1 if bad or got < count else 0)


main()
