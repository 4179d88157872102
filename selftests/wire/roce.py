# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RoCEv2 for the tests, written from IBA annex A17 with zlib's CRC-32, and
independent of kernel/proto: the ICRC of a packet, and packets built by
hand (IPv4, UDP, BTH) for the hostile-packet tests."""
import socket
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


def icrc_rxe_flush(ip, udp):
    """rdma_rxe's ICRC of a FLUSH (6.2 to at least 6.12): its opcode table
    has no payload offset for FLUSH, so the CRC runs over the transport
    headers (BTH onwards) a second time, unmasked, as if they were payload."""
    crc = zlib.crc32(b'\xff' * 8 + masked(ip, udp))
    return struct.pack('<I', zlib.crc32(udp[8:], crc))


def icrc_ok(ip, udp):
    """True when the last 4 bytes of @udp are its ICRC, or for an RC FLUSH
    (opcode 0x1c) rdma_rxe's form of it."""
    body, wire = udp[:-4], udp[-4:]
    return icrc(ip, body) == wire or \
        (udp[8] == 0x1c and icrc_rxe_flush(ip, body) == wire)


def ipv4(src, dst, payload_len, ident):
    hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + payload_len, ident,
                      0x4000, 64, 17, 0, socket.inet_aton(src),
                      socket.inet_aton(dst))
    s = sum(struct.unpack('!10H', hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return hdr[:10] + struct.pack('!H', ~s & 0xffff) + hdr[12:]


def bth(opcode, dqpn, psn=0, flags=0):
    return struct.pack('!BBHII', opcode, flags, 0xffff, dqpn, psn)


def packet(src, dst, transport, ident, good_icrc=True, udp_len=None,
           icrc_of=icrc):
    """An IPv4 packet carrying @transport (BTH onwards, without ICRC), with
    the ICRC that @icrc_of computes (spoilt unless @good_icrc)."""
    length = 8 + len(transport) + 4
    udp = struct.pack('!HHHH', 0xc000, 4791, udp_len or length, 0) + transport
    ip = ipv4(src, dst, length, ident)
    crc = icrc_of(ip, udp)
    if not good_icrc:
        crc = bytes([crc[0] ^ 1]) + crc[1:]
    return ip + udp + crc
