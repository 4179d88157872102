#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Starts verbs/stale_sink on softrma device DEV at address IP and sends its
QPs hand-made RC packets through a raw IPv4 socket: the FIRST packet of an
8 KiB WRITE to each (QP 0 through MR N's rkey, QP 1 through the window's
key), then, once both have been answered, has the sink take REMOTE_WRITE
from N (ibv_rereg_mr) and bind the window again under the same key to
1 KiB elsewhere in M, and then sends each WRITE's MIDDLE packet.  Neither
may land: the registration and the binding the WRITEs began with are gone.
Prints the sink's report ("state I S", "N ...", "M ...").

usage: craft_stale.py SINK DEV IP"""
import socket
import subprocess
import sys

from craft_rc import ACKREQ, WRITE_FIRST, WRITE_MIDDLE, reth, wait_sent, sent_pkts
from roce import bth, packet


def expect(sink, prefix):
    """The sink's next line, which must start with @prefix: its value."""
    line = sink.stdout.readline()
    if not line.startswith(prefix):
        sys.exit(f'stale_sink said {line!r}, not {prefix}...')
    return line[len(prefix):].strip()


def main():
    sink_bin, dev, ip = sys.argv[1:4]
    sink = subprocess.Popen([sink_bin, dev, ip], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    qpn = [int(expect(sink, 'qpn0 ')), int(expect(sink, 'qpn1 '))]
    rkey, addr = int(expect(sink, 'rkey ')), int(expect(sink, 'addr '))
    mwkey = int(expect(sink, 'mwkey '))
    expect(sink, 'ready')
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)

    def send(what, transport, ident):
        sock.sendto(packet(ip, ip, transport, ident), (ip, 0))
        print(f'# sent: {what}', file=sys.stderr)

    since = sent_pkts(dev)
    send('QP 0: WRITE FIRST of 8 KiB through N',
         bth(WRITE_FIRST, qpn[0], 0 | ACKREQ) + reth(addr, rkey, 8192) + b'f' * 1024, 1)
    send('QP 1: WRITE FIRST of 8 KiB through the window',
         bth(WRITE_FIRST, qpn[1], 0 | ACKREQ) + reth(0, mwkey, 8192) + b'f' * 1024, 2)
    wait_sent(dev, since, 2)
    for cmd in ('rereg', 'rebind'):
        sink.stdin.write(cmd + '\n')
        if expect(sink, cmd + ' ') != '0':
            sys.exit(f'stale_sink: {cmd} failed')
        print(f'# sink: {cmd} done', file=sys.stderr)
    since = sent_pkts(dev)
    send('QP 0: WRITE MIDDLE', bth(WRITE_MIDDLE, qpn[0], 1 | ACKREQ) + b'm' * 1024, 3)
    send('QP 1: WRITE MIDDLE', bth(WRITE_MIDDLE, qpn[1], 1 | ACKREQ) + b'm' * 1024, 4)
    wait_sent(dev, since, 2)
    sink.stdin.write('check\n')
    sink.stdin.close()
    sys.stdout.write(sink.stdout.read())
    sys.exit(sink.wait())


main()
