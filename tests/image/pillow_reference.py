#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes what Pillow makes of a few hundred images, for the image tests to compare against.

Run by CTest before the image tests (Debian's python3-pil, Pillow 9.4.0):

    python3 pillow_reference.py OUT_DIR TESTS_DATA_DIR

OUT_DIR receives three manifests (JSON) and one blob of pixels each:
  decode.json   encoded files of every format and variant we decode (written to OUT_DIR/decode/),
                each with Pillow's exif_transpose(...).convert("RGB") pixels, or "error": true
                when Pillow refuses the file;
  resize.json   random and edge-case (source size, target size) pairs: source pixels and
                Image.resize(size, BICUBIC) pixels;
  encode.json   RGB images and the JPEG bytes Pillow writes for them (default settings, and
                quality 90 without chroma subsampling);
  crops.json    the committed 200-DPI page renders: SHA-256 of Pillow's RGB pixels, the
                1036 x 1036 layout image, and blocks cropped, rotated and resized by MinerU's
                rules (both the ceil and the round variant of resize_by_need).
Every number comes from a fixed seed, so two runs write identical files.
"""
import hashlib
import io
import json
import math
import os
import struct
import sys
import warnings
import zlib

import numpy as np
import PIL
from PIL import Image, ImageOps

OUT = sys.argv[1]
DATA = sys.argv[2]
RNG = np.random.default_rng(20250929)


class Blob:
    """Pixel arrays appended to one file; manifests hold (offset, size)."""

    def __init__(self, path):
        self.f = open(path, "wb")
        self.offset = 0

    def add(self, data):
        data = bytes(data)
        at = self.offset
        self.f.write(data)
        self.offset += len(data)
        return [at, len(data)]

    def close(self):
        self.f.close()


def rgb_bytes(im):
    return im.convert("RGB").tobytes()


def mineru_rgb(im):
    """mineru_vl_utils.vlm_client.utils.get_rgb_image."""
    if im.mode == "P":
        im = im.convert("RGBA")
    if im.mode != "RGB":
        im = im.convert("RGB")
    return im


def noise(w, h, channels=3):
    return RNG.integers(0, 256, size=(h, w, channels), dtype=np.uint8)


def smooth(w, h):
    y, x = np.mgrid[0:h, 0:w]
    r = (128 + 127 * np.sin(x / 7.0 + y / 11.0)).astype(np.uint8)
    g = (x * 255 // max(w - 1, 1)).astype(np.uint8)
    b = ((x ^ y) & 255).astype(np.uint8)
    return np.stack([r, g, b], axis=2)


# ------------------------------------------------------------------------------------------
# Hand-written encoders for variants Pillow cannot write.


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pack_row(values, depth):
    """values: list of ints (samples) -> bytes at `depth` bits per sample."""
    if depth == 8:
        return bytes(values)
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in values)
    out, acc, n = bytearray(), 0, 0
    for v in values:
        acc = (acc << depth) | v
        n += depth
        if n == 8:
            out.append(acc)
            acc, n = 0, 0
    if n:
        out.append(acc << (8 - n))
    return bytes(out)


def png_file(width, height, depth, color_type, samples, interlace=False, before=b"",
             after=b"", plte=None, trns=None):
    """samples: H x W x C integer array."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 1 if interlace else 0)
    raw = bytearray()
    if interlace:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
                  (1, 0, 2, 2), (0, 1, 1, 2)]
        for x0, y0, dx, dy in passes:
            sub = samples[y0::dy, x0::dx]
            if sub.shape[0] == 0 or sub.shape[1] == 0:
                continue
            for row in sub:
                raw += b"\0" + pack_row([int(v) for v in row.reshape(-1)], depth)
    else:
        for row in samples:
            raw += b"\0" + pack_row([int(v) for v in row.reshape(-1)], depth)
    body = png_chunk(b"IHDR", ihdr)
    if plte is not None:
        body += png_chunk(b"PLTE", bytes(plte))
    if trns is not None:
        body += png_chunk(b"tRNS", bytes(trns))
    body += before + png_chunk(b"IDAT", zlib.compress(bytes(raw))) + after
    return b"\x89PNG\r\n\x1a\n" + body + png_chunk(b"IEND", b"")


def exif_bytes(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()  # starts with "Exif\0\0"


def tiff_file(width, height, bps, spp, photometric, planes, planar=1, extra=None,
              orientation=None, tile=None, colormap=None):
    """Little-endian uncompressed TIFF. planes: list (1, or spp when planar) of H x rowbytes."""
    blocks, tags = [], {}
    if tile:
        tw, th = tile
        offsets, counts = [], []
        for plane in planes:
            row_bytes = plane.shape[1]
            bits_px = row_bytes * 8 // width  # bits per pixel in this plane
            tile_row = (tw * bits_px + 7) // 8
            for ty in range(0, height, th):
                for tx in range(0, width, tw):
                    t = np.zeros((th, tile_row), dtype=np.uint8)
                    part = plane[ty:ty + th, tx * bits_px // 8: tx * bits_px // 8 + tile_row]
                    t[:part.shape[0], :part.shape[1]] = part
                    offsets.append(len(blocks))
                    blocks.append(t.tobytes())
                    counts.append(len(blocks[-1]))
        tags[322] = (3, [tw])
        tags[323] = (3, [th])
        tags[324] = (4, offsets)  # block indices, fixed up below
        tags[325] = (4, counts)
    else:
        offsets, counts = [], []
        for plane in planes:
            offsets.append(len(blocks))
            blocks.append(plane.tobytes())
            counts.append(len(blocks[-1]))
        tags[273] = (4, offsets)
        tags[278] = (3, [height])
        tags[279] = (4, counts)
    tags[256] = (4, [width])
    tags[257] = (4, [height])
    tags[258] = (3, [bps] * spp)
    tags[259] = (3, [1])
    tags[262] = (3, [photometric])
    tags[277] = (3, [spp])
    tags[284] = (3, [planar])
    if extra is not None:
        tags[338] = (3, [extra])
    if orientation is not None:
        tags[274] = (3, [orientation])
    if colormap is not None:
        tags[320] = (3, colormap)
    # Layout: header, data blocks, out-of-line tag values, IFD.
    data = bytearray(b"II*\0" + b"\0\0\0\0")
    block_at = []
    for b in blocks:
        block_at.append(len(data))
        data += b
        if len(data) % 2:
            data += b"\0"
    for key in (273, 324):
        if key in tags:
            tags[key] = (4, [block_at[i] for i in tags[key][1]])
    entries = []
    for tag in sorted(tags):
        typ, values = tags[tag]
        fmt = "<" + ("H" if typ == 3 else "I") * len(values)
        payload = struct.pack(fmt, *values)
        if len(payload) <= 4:
            entries.append(struct.pack("<HHI", tag, typ, len(values)) + payload.ljust(4, b"\0"))
        else:
            at = len(data)
            data += payload
            if len(data) % 2:
                data += b"\0"
            entries.append(struct.pack("<HHII", tag, typ, len(values), at))
    ifd = len(data)
    data += struct.pack("<H", len(entries)) + b"".join(entries) + b"\0\0\0\0"
    data[4:8] = struct.pack("<I", ifd)
    return bytes(data)


def bmp_file(width, height, bits, rows, header_size=40, compression=0, palette=None,
             masks=None, top_down=False, colors=0, offset=None, pixel_data=None):
    """rows: list of bytes, top row first (padded here to 4 bytes)."""
    stride = ((width * bits + 31) >> 3) & ~3
    if pixel_data is None:
        ordered = rows if top_down else rows[::-1]
        pixel_data = b"".join(r.ljust(stride, b"\0") for r in ordered)
    if header_size == 12:
        header = struct.pack("<IHHHH", 12, width, height, 1, bits)
    else:
        h = (2**32 - height) if top_down else height
        header = struct.pack("<IiIHHIIiiII", header_size, width, h, 1, bits, compression,
                             len(pixel_data), 2835, 2835, colors, 0)
        if header_size > 40:
            extra = bytearray(header_size - 40)
            if masks:
                for i, m in enumerate(masks):
                    struct.pack_into("<I", extra, 4 * i, m)
            header += bytes(extra)
    after = b""
    if header_size == 40 and masks:
        after = b"".join(struct.pack("<I", m) for m in masks[:3])
    pal = b""
    if palette is not None:
        entry = 3 if header_size == 12 else 4
        pal = b"".join(bytes([b, g, r] + ([0] if entry == 4 else [])) for r, g, b in palette)
    start = 14 + len(header) + len(after) + len(pal)
    file_header = b"BM" + struct.pack("<IHHI", start + len(pixel_data), 0, 0,
                                      start if offset is None else offset)
    return file_header + header + after + pal + pixel_data


def gif_parts(data):
    """Splits a GIF into (header + screen, global table, middle, descriptor offset)."""
    flags = data[10]
    table = 3 << ((flags & 7) + 1) if flags & 0x80 else 0
    pos = 13 + table
    while data[pos] == 0x21:  # extensions
        pos += 2
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
    assert data[pos] == 0x2C
    return pos, table


# ------------------------------------------------------------------------------------------
# Decode cases.


def decode_cases():
    cases = []

    def add(name, data, note=""):
        cases.append((name, data, note))

    def pil(im, fmt, **kw):
        f = io.BytesIO()
        im.save(f, fmt, **kw)
        return f.getvalue()

    rgb = Image.fromarray(smooth(45, 31), "RGB")
    rgba = Image.fromarray(np.concatenate([smooth(45, 31), noise(45, 31, 1)], 2), "RGBA")
    grey = rgb.convert("L")

    # PNG: every colour type and bit depth, hand-written, some interlaced.
    for depth in (1, 2, 4, 8, 16):
        s = RNG.integers(0, 2**depth, size=(13, 19, 1))
        if depth == 16:
            s[0, :5, 0] = [0, 200, 255, 256, 65535]  # clipping
        add(f"png_grey{depth}", png_file(19, 13, depth, 0, s))
        add(f"png_grey{depth}_interlaced", png_file(19, 13, depth, 0, s, interlace=True))
        idx = RNG.integers(0, 2**depth if depth < 16 else 256, size=(13, 19, 1))
        if depth <= 8:
            plte = list(RNG.integers(0, 256, size=3 * min(2**depth, 5)))
            add(f"png_palette{depth}_short", png_file(19, 13, depth, 3, idx, plte=plte,
                                                      trns=[0, 128]))
    for depth in (8, 16):
        add(f"png_greyalpha{depth}", png_file(17, 9, depth, 4,
                                              RNG.integers(0, 2**depth, size=(9, 17, 2))))
        add(f"png_rgb{depth}", png_file(17, 9, depth, 2, RNG.integers(0, 2**depth, (9, 17, 3))))
        add(f"png_rgba{depth}_interlaced",
            png_file(17, 9, depth, 6, RNG.integers(0, 2**depth, (9, 17, 4)), interlace=True))
    add("png_rgb8_trns", png_file(5, 4, 8, 2, RNG.integers(0, 256, (4, 5, 3)),
                                  trns=[0, 1, 0, 2, 0, 3]))
    for mode in ("1", "L", "LA", "P", "RGB", "RGBA", "I;16"):
        im = rgba.convert(mode) if mode != "I;16" else grey.convert("I").point(lambda v: v * 200)
        if mode == "I;16":
            im = im.convert("I;16")
        add(f"png_pillow_{mode.replace(';', '')}", pil(im, "PNG"))
    s = RNG.integers(0, 256, (7, 11, 3))
    exif = exif_bytes(6)[6:]
    add("png_exif6", png_file(11, 7, 8, 2, s, before=png_chunk(b"eXIf", exif)))
    add("png_exif6_after_idat", png_file(11, 7, 8, 2, s, after=png_chunk(b"eXIf", exif)))
    hexed = exif_bytes(3)[6:].hex()
    raw_profile = "\nexif\n" + f"{len(hexed) // 2:8d}\n" + "\n".join(
        hexed[i:i + 72] for i in range(0, len(hexed), 72)) + "\n"
    add("png_raw_profile3", png_file(11, 7, 8, 2, s, before=png_chunk(
        b"zTXt", b"Raw profile type exif\0\0" + zlib.compress(raw_profile.encode()))))
    xmp = ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description '
           'tiff:Orientation="8"/></rdf:RDF></x:xmpmeta>')
    add("png_xmp8", png_file(11, 7, 8, 2, s, before=png_chunk(
        b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + xmp.encode())))

    # JPEG: Pillow's encoder (libjpeg-turbo), every orientation on a non-square image.
    photo = Image.fromarray(smooth(37, 23), "RGB")
    add("jpeg_rgb420", pil(photo, "JPEG"))
    add("jpeg_rgb444_q95", pil(photo, "JPEG", quality=95, subsampling=0))
    add("jpeg_rgb422", pil(photo, "JPEG", subsampling=1))
    add("jpeg_progressive", pil(photo, "JPEG", progressive=True, quality=90))
    add("jpeg_optimized", pil(photo, "JPEG", optimize=True))
    add("jpeg_grey", pil(photo.convert("L"), "JPEG"))
    add("jpeg_cmyk", pil(Image.fromarray(noise(21, 13, 4), "CMYK"), "JPEG", quality=90))
    add("jpeg_odd_size", pil(Image.fromarray(noise(33, 17), "RGB"), "JPEG"))
    for o in range(1, 9):
        add(f"jpeg_orientation{o}", pil(photo, "JPEG", exif=exif_bytes(o)))

    # WebP: lossless and lossy, with and without alpha, animated, EXIF.
    add("webp_lossless", pil(rgb, "WEBP", lossless=True))
    add("webp_lossy", pil(rgb, "WEBP", quality=80))
    add("webp_lossless_alpha", pil(rgba, "WEBP", lossless=True))
    add("webp_lossy_alpha", pil(rgba, "WEBP", quality=70))
    frame2 = Image.fromarray(noise(45, 31), "RGB")
    add("webp_animated", pil(rgb, "WEBP", save_all=True, append_images=[frame2], duration=100,
                             lossless=True))
    add("webp_exif8", pil(rgb, "WEBP", quality=85, exif=exif_bytes(8)))

    # TIFF: Pillow's writer (libtiff) for compressions, hand-written for layouts.
    for compression in ("raw", "tiff_lzw", "tiff_deflate", "packbits", "jpeg"):
        add(f"tiff_rgb_{compression}", pil(rgb, "TIFF", compression=compression))
    for mode in ("1", "L", "LA", "P", "RGBA", "CMYK", "I;16"):
        im = rgba.convert(mode) if mode != "I;16" else grey.convert("I").point(
            lambda v: v * 150).convert("I;16")
        add(f"tiff_pillow_{mode.replace(';', '')}", pil(im, "TIFF", compression="tiff_lzw"))
    add("tiff_bilevel_g4", pil(rgb.convert("1"), "TIFF", compression="group4"))
    add("tiff_grey_jpeg", pil(grey, "TIFF", compression="jpeg"))
    add("tiff_cmyk_noise", pil(Image.fromarray(noise(64, 64, 4), "CMYK"), "TIFF"))
    add("tiff_orientation6", pil(rgb, "TIFF", tiffinfo={274: 6}))
    g = RNG.integers(0, 256, (9, 21), dtype=np.uint8)
    add("tiff_miniswhite8", tiff_file(21, 9, 8, 1, 0, [g]))
    bits = np.packbits(RNG.integers(0, 2, (9, 21)).astype(np.uint8), axis=1)
    add("tiff_miniswhite1", tiff_file(21, 9, 1, 1, 0, [bits]))
    four = np.array([[int(a) << 4 | int(b) for a, b in zip(r[0::2], r[1::2])]
                     for r in RNG.integers(0, 16, (9, 22))], dtype=np.uint8)
    add("tiff_grey4", tiff_file(21, 9, 4, 1, 1, [four]))
    planes = [RNG.integers(0, 256, (9, 21), dtype=np.uint8) for _ in range(3)]
    add("tiff_rgb_planar", tiff_file(21, 9, 8, 3, 2, planes, planar=2))
    px = RNG.integers(0, 256, (40, 37, 3), dtype=np.uint8)
    add("tiff_rgb_tiled", tiff_file(37, 40, 8, 3, 2, [px.reshape(40, -1)], tile=(16, 16)))
    px16 = RNG.integers(0, 65536, (5, 7, 4), dtype=np.uint16).astype("<u2")
    add("tiff_rgba16", tiff_file(7, 5, 16, 4, 2, [px16.view(np.uint8).reshape(5, -1)], extra=2))
    prem = RNG.integers(0, 256, (5, 7, 4), dtype=np.uint8)
    prem[..., :3] = np.minimum(prem[..., :3], prem[..., 3:])
    add("tiff_rgb_assoc_alpha", tiff_file(7, 5, 8, 4, 2, [prem.reshape(5, -1)], extra=1))
    cmap = [int(v) for v in RNG.integers(0, 65536, 3 * 16)]
    idx4 = np.array([[int(a) << 4 | int(b) for a, b in zip(r[0::2], r[1::2])]
                     for r in RNG.integers(0, 16, (6, 10))], dtype=np.uint8)
    add("tiff_palette4", tiff_file(10, 6, 4, 1, 3, [idx4], colormap=cmap))
    add("tiff_float_unsupported", tiff_file(4, 4, 8, 1, 4, [np.zeros((4, 4), np.uint8)]))

    # BMP: Pillow's writer and hand-written variants.
    for mode in ("1", "L", "P", "RGB", "RGBA"):
        add(f"bmp_pillow_{mode}", pil(rgba.convert(mode), "BMP"))
    w, h = 13, 7
    pal16 = [tuple(int(v) for v in RNG.integers(0, 256, 3)) for _ in range(16)]
    idx = RNG.integers(0, 16, (h, w))
    rows4 = [bytes((int(r[i]) << 4) | (int(r[i + 1]) if i + 1 < w else 0)
                   for i in range(0, w, 2)) for r in idx]
    add("bmp_palette4", bmp_file(w, h, 4, rows4, palette=pal16, colors=16))
    add("bmp_palette4_topdown", bmp_file(w, h, 4, rows4, palette=pal16, colors=16, top_down=True))
    idx8 = RNG.integers(0, 256, (h, w), dtype=np.uint8)
    pal5 = [tuple(int(v) for v in RNG.integers(0, 256, 3)) for _ in range(5)]
    add("bmp_palette8_short", bmp_file(w, h, 8, [bytes(r) for r in idx8], palette=pal5, colors=5))
    add("bmp_core_palette8", bmp_file(w, h, 8, [bytes(r) for r in idx8], header_size=12,
                                      palette=[tuple(int(v) for v in RNG.integers(0, 256, 3))
                                               for _ in range(256)]))
    p16 = RNG.integers(0, 65536, (h, w), dtype=np.uint16)
    rows16 = [r.astype("<u2").tobytes() for r in p16]
    add("bmp_555", bmp_file(w, h, 16, rows16))
    add("bmp_565_bitfields", bmp_file(w, h, 16, rows16, compression=3,
                                      masks=[0xF800, 0x7E0, 0x1F]))
    add("bmp_555_bitfields_v4", bmp_file(w, h, 16, rows16, header_size=108, compression=3,
                                         masks=[0x7C00, 0x3E0, 0x1F, 0]))
    p32 = RNG.integers(0, 256, (h, w, 4), dtype=np.uint8)
    rows32 = [r.tobytes() for r in p32]
    for name, masks in (("xbgr", [0xFF000000, 0xFF0000, 0xFF00, 0]),
                        ("abgr", [0xFF000000, 0xFF0000, 0xFF00, 0xFF]),
                        ("rgba", [0xFF, 0xFF00, 0xFF0000, 0xFF000000]),
                        ("bgra", [0xFF0000, 0xFF00, 0xFF, 0xFF000000])):
        add(f"bmp_32_{name}_v5", bmp_file(w, h, 32, rows32, header_size=124, compression=3,
                                          masks=masks))
    add("bmp_32_bad_masks", bmp_file(w, h, 32, rows32, header_size=124, compression=3,
                                     masks=[0xF00, 0xF0, 0xF, 0]))
    rows24 = [r.tobytes() for r in RNG.integers(0, 256, (h, w, 3), dtype=np.uint8)]
    add("bmp_24_topdown", bmp_file(w, h, 24, rows24, top_down=True))
    # RLE8: runs, an end of line, a delta, an absolute run with padding, end of bitmap.
    rle8 = bytes([3, 1, 2, 2, 0, 3, 5, 6, 7, 0, 4, 9, 0, 0, 0, 2, 2, 1, 13, 4, 0, 0]
                 + [13, 3] * 4 + [0, 1])
    add("bmp_rle8", bmp_file(13, 7, 8, None, compression=1, palette=pal16, colors=16,
                             pixel_data=rle8))
    rle4 = bytes([5, 0x12, 0, 4, 0x34, 0x56, 0, 0, 13, 0xAB, 0, 2, 3, 1, 0, 0]
                 + [13, 0x21, 0, 0] * 5 + [0, 1])
    add("bmp_rle4", bmp_file(13, 7, 4, None, compression=2, palette=pal16, colors=16,
                             pixel_data=rle4))
    # An odd absolute run: Pillow reads one byte too few and goes on from there.
    rle4_odd = bytes([5, 0x12, 0, 5, 0x34, 0x56, 0, 0, 0, 13, 0xAB, 0, 0]
                     + [13, 0x21, 0, 0] * 8 + [0, 1])
    add("bmp_rle4_odd_run", bmp_file(13, 7, 4, None, compression=2, palette=pal16, colors=16,
                                     pixel_data=rle4_odd))
    add("bmp_rle8_short", bmp_file(13, 7, 8, None, compression=1, palette=pal16, colors=16,
                                   pixel_data=bytes([13, 1, 0, 1])))

    # GIF: Pillow's writer, then screens and frames moved by patching the descriptors.
    pimg = rgb.quantize(colors=7)
    plain = pil(pimg, "GIF")
    add("gif_palette", plain)
    add("gif_interlaced", pil(Image.fromarray(smooth(40, 33), "RGB").quantize(colors=20), "GIF",
                              interlace=True))
    add("gif_transparent", pil(pimg, "GIF", transparency=3))
    add("gif_grey", pil(grey, "GIF"))
    add("gif_animated", pil(pimg, "GIF", save_all=True, append_images=[frame2.quantize(5)]))
    at, _ = gif_parts(plain)
    big = bytearray(plain)
    struct.pack_into("<HH", big, 6, 60, 50)  # larger screen
    struct.pack_into("<HH", big, at + 1, 9, 11)  # frame at (9, 11)
    add("gif_frame_offset", bytes(big))
    t = bytearray(pil(pimg, "GIF", transparency=2))
    at_t, _ = gif_parts(t)
    struct.pack_into("<HH", t, 6, 50, 40)
    struct.pack_into("<HH", t, at_t + 1, 3, 4)
    add("gif_frame_offset_transparent", bytes(t))
    grow = bytearray(plain)
    struct.pack_into("<HH", grow, 6, 20, 10)  # screen smaller than the frame
    struct.pack_into("<HH", grow, at + 1, 5, 2)
    add("gif_frame_grows_screen", bytes(grow))
    # Local table instead of the global one.
    flags = plain[10]
    _, table = gif_parts(plain)
    local = bytearray(plain[:10]) + bytes([flags & 0x7F]) + plain[11:13] + plain[13 + table:at]
    desc = bytearray(plain[at:at + 10])
    desc[9] = (desc[9] & 0x78) | 0x80 | (flags & 7)
    local += desc + plain[13:13 + table] + plain[at + 10:]
    add("gif_local_table", bytes(local))
    no_table = bytearray(plain[:10]) + bytes([flags & 0x7F]) + plain[11:13] + plain[13 + table:]
    add("gif_no_table", bytes(no_table))
    return cases


def write_decode(blob):
    os.makedirs(os.path.join(OUT, "decode"), exist_ok=True)
    entries = []
    for name, data, _ in decode_cases():
        path = os.path.join(OUT, "decode", name)
        with open(path, "wb") as f:
            f.write(data)
        entry = {"name": name, "file": "decode/" + name}
        try:
            # MinerU's order: open, exif_transpose (which reads the metadata seen so far: a PNG
            # eXIf chunk after the image data does not count), convert.
            im = Image.open(io.BytesIO(data))
            mode = im.mode
            exif = im.getexif().get(0x0112)
            if im.format == "TIFF":
                # Pillow 9.4's TIFF loader already turns the pixels by the Orientation tag, and
                # exif_transpose then turns them a second time (a Pillow bug). The reference is
                # the image turned once: what Image.open(...).convert("RGB") gives.
                upright = im
            else:
                upright = ImageOps.exif_transpose(im)
            out = upright.convert("RGB")
            assert mineru_rgb(upright).tobytes() == out.tobytes(), name
            entry.update(width=out.width, height=out.height, mode=mode,
                         orientation=exif if isinstance(exif, int) else None,
                         pixels=blob.add(out.tobytes()))
        except Exception as e:  # Pillow refuses the file
            entry.update(error=True, pillow_error=f"{type(e).__name__}: {e}")
        entries.append(entry)
    return entries


# ------------------------------------------------------------------------------------------
# Resize cases.


def resize_pairs():
    pairs = []
    for _ in range(150):
        sw, sh = (int(v) for v in np.exp(RNG.uniform(0, math.log(300), 2)))
        tw, th = (int(v) for v in np.exp(RNG.uniform(0, math.log(400), 2)))
        pairs.append((sw, sh, tw, th))
    edges = [(1, 1, 5, 7), (5, 1, 1, 9), (1, 9, 4, 1), (8, 8, 8, 8), (30, 20, 30, 45),
             (30, 20, 61, 20), (64, 64, 32, 32), (64, 64, 16, 128), (300, 3, 7, 2),
             (3, 300, 2, 290), (2, 2, 400, 3), (333, 517, 336, 504), (400, 300, 392, 308),
             (50, 40, 84, 56), (97, 13, 28, 4), (13, 97, 4, 28), (255, 1, 17, 1),
             (1036, 4, 1036, 1036), (17, 19, 1036, 1036), (200, 150, 1036, 1036)]
    pairs += edges
    # Random sizes around 28-pixel multiples, as smart_resize produces.
    for _ in range(40):
        sw, sh = (int(v) for v in RNG.integers(20, 260, 2))
        tw, th = (int(28 * max(1, round(v / 28))) for v in (sw * RNG.uniform(0.5, 2),
                                                               sh * RNG.uniform(0.5, 2)))
        pairs.append((sw, sh, tw, th))
    return pairs


def write_resize(blob):
    entries = []
    for i, (sw, sh, tw, th) in enumerate(resize_pairs()):
        kind = i % 3
        arr = noise(sw, sh) if kind == 0 else smooth(sw, sh)
        if kind == 2:  # saturated blocks: the negative lobes overshoot, clip8 must clamp
            arr = ((arr // 128) * 255).astype(np.uint8)
        src = Image.fromarray(arr, "RGB")
        out = src.resize((tw, th), Image.Resampling.BICUBIC)
        entries.append({"src": [sw, sh], "dst": [tw, th], "src_pixels": blob.add(arr.tobytes()),
                        "dst_pixels": blob.add(out.tobytes())})
    return entries


# ------------------------------------------------------------------------------------------
# MinerU's crops on real pages.


def resize_by_need(image, rounding, min_edge=28, max_ratio=50.0):
    """mineru_vl_utils MinerUClientHelper.resize_by_need (rounding: math.ceil or round)."""
    edge_ratio = max(image.size) / min(image.size)
    if edge_ratio > max_ratio:
        width, height = image.size
        if width > height:
            new_w, new_h = width, math.ceil(width / max_ratio)
        else:
            new_w, new_h = math.ceil(height / max_ratio), height
        new_image = Image.new(image.mode, (new_w, new_h), (255, 255, 255))
        new_image.paste(image, (int((new_w - width) / 2), int((new_h - height) / 2)))
        image = new_image
    if min(image.size) < min_edge:
        scale = min_edge / min(image.size)
        new_w, new_h = rounding(image.width * scale), rounding(image.height * scale)
        image = image.resize((new_w, new_h), Image.Resampling.BICUBIC)
    return image


def block_boxes(count):
    """Boxes as the layout model writes them: integers on a 0-1000 grid, divided by 1000."""
    boxes = []
    for i in range(count):
        kind = i % 5
        x1, y1 = (int(v) for v in RNG.integers(0, 950, 2))
        if kind == 0:  # ordinary block
            x2, y2 = x1 + int(RNG.integers(20, 300)), y1 + int(RNG.integers(10, 200))
        elif kind == 1:  # thin rule: more than 50:1
            x2, y2 = x1 + int(RNG.integers(300, 900)), y1 + 1
        elif kind == 2:  # small: under 28 px on a side
            x2, y2 = x1 + int(RNG.integers(1, 12)), y1 + int(RNG.integers(1, 12))
        elif kind == 3:  # tall narrow column
            x2, y2 = x1 + 1, y1 + int(RNG.integers(100, 900))
        else:  # wide
            x2, y2 = x1 + int(RNG.integers(200, 600)), y1 + int(RNG.integers(5, 30))
        boxes.append([x1 / 1000, y1 / 1000, min(x2, 1000) / 1000, min(y2, 1000) / 1000])
    boxes.append([0.5, 0.5, 0.5002, 0.9])  # rounds to an empty crop: skipped
    return boxes


def write_crops(blob):
    pages = []
    angles = [None, 0, 90, 180, 270]
    page_dir = os.path.join(DATA, "images", "pages")
    for name in sorted(os.listdir(page_dir)):
        page = Image.open(os.path.join(page_dir, name))
        page.load()
        page = mineru_rgb(page)
        width, height = page.size
        layout = page.resize((1036, 1036), Image.Resampling.BICUBIC)
        entry = {"file": "images/pages/" + name, "width": width, "height": height,
                 "sha256": hashlib.sha256(page.tobytes()).hexdigest(),
                 "layout": blob.add(layout.tobytes()), "blocks": []}
        for i, box in enumerate(block_boxes(30)):
            angle = angles[i % len(angles)]
            crop = page.crop((box[0] * width, box[1] * height, box[2] * width, box[3] * height))
            block = {"bbox": box, "angle": angle}
            if crop.width < 1 or crop.height < 1:
                block["skipped"] = True
            else:
                if angle in (90, 180, 270):
                    crop = crop.rotate(angle, expand=True)
                for key, rounding in (("ceil", math.ceil), ("round", round)):
                    out = resize_by_need(crop, rounding)
                    block[key] = {"size": [out.width, out.height], "pixels": blob.add(out.tobytes())}
            entry["blocks"].append(block)
        pages.append(entry)
    return pages


def write_encode(blob):
    entries = []
    for w, h in ((1, 1), (37, 23), (64, 48), (301, 17)):
        arr = smooth(w, h) if w > 1 else noise(w, h)
        im = Image.fromarray(arr, "RGB")
        entry = {"size": [w, h], "pixels": blob.add(arr.tobytes()), "jpeg": []}
        for options in ({}, {"quality": 90, "subsampling": 0}):
            f = io.BytesIO()
            im.save(f, "JPEG", **options)
            entry["jpeg"].append({"quality": options.get("quality", 75),
                                  "subsampling": "4:4:4" if options else "4:2:0",
                                  "bytes": blob.add(f.getvalue())})
        entries.append(entry)
    return entries


def main():
    warnings.simplefilter("ignore")  # Pillow's advice about palette transparency
    os.makedirs(OUT, exist_ok=True)
    outputs = {"decode": write_decode, "resize": write_resize, "encode": write_encode,
               "crops": write_crops}
    for key, fn in outputs.items():
        blob = Blob(os.path.join(OUT, key + ".bin"))
        entries = fn(blob)
        blob.close()
        manifest = {"pillow": PIL.__version__, "numpy": np.__version__, "cases": entries}
        with open(os.path.join(OUT, key + ".json"), "w") as f:
            json.dump(manifest, f, indent=1)
    print(f"Pillow {PIL.__version__}: reference written to {OUT}")


if __name__ == "__main__":
    main()
