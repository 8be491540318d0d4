"""Reads back the 8-bit RGB PNGs the examples write (stb_image_write), with the standard library
only: every chunk's CRC checked, the IDAT stream inflated, each row's filter undone.

    width, height, rows = read_png(path)   # rows: height bytearrays of width * 3 bytes
"""
import struct
import zlib


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    with open(path, 'rb') as f:
        data = f.read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', f'{path}: not a PNG signature'
    pos, idat, width, height = 8, b'', None, None
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])[0]
        assert zlib.crc32(kind + body) == crc, f'{path}: bad CRC in chunk {kind}'
        if kind == b'IHDR':
            width, height, depth, colour = struct.unpack('>IIBB', body[:10])
            assert depth == 8 and colour == 2, f'{path}: not 8-bit RGB: {depth}, {colour}'
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * 3
    assert len(raw) == height * (1 + stride), f'{path}: rows missing'
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(3, stride):
                line[i] = (line[i] + line[i - 3]) & 0xff
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xff
        elif kind == 3:
            for i in range(stride):
                a = line[i - 3] if i >= 3 else 0
                line[i] = (line[i] + (a + prev[i]) // 2) & 0xff
        elif kind == 4:
            for i in range(stride):
                a, c = (line[i - 3], prev[i - 3]) if i >= 3 else (0, 0)
                line[i] = (line[i] + _paeth(a, prev[i], c)) & 0xff
        else:
            assert kind == 0, f'{path}: row {y} has filter {kind}'
        rows.append(line)
        prev = line
    return width, height, rows
