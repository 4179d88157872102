# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RoCEv2 for the tests, written from IBA annex A17 with zlib's CRC-32, and
independent of kernel/proto: the ICRC of a packet."""
import struct
import zlib


def masked(ip, udp):
    """The IP header and the UDP datagram (without ICRC) with the fields the
    ICRC does not cover set to ones."""
    ip = bytearray(ip)
    if ip[0] >> 4 == 4:
        ip[1] = 0xff                    # TOS
        ip[8] = 0xff                    # TTL
        ip[10:12] = b'\xff\xff'         # header checksum
    else:
        ip[0] |= 0x0f                   # traffic class and flow label
        ip[1:4] = b'\xff\xff\xff'
        ip[7] = 0xff                    # hop limit
    udp = bytearray(udp)
    udp[6:8] = b'\xff\xff'              # UDP checksum
    udp[12] = 0xff                      # BTH: FECN, BECN, reserved
    return bytes(ip) + bytes(udp)


def icrc(ip, udp):
    """The 4 ICRC bytes for IP header @ip and UDP datagram @udp (no ICRC)."""
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + masked(ip, udp)))
