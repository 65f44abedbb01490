#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the synthetic PDF fixtures of tests/pdf/ (run from anywhere; needs python3 and qpdf).

Each file is written object by object with a correct cross-reference table, so Poppler opens it
without repairs; the encrypted ones are made from shapes.pdf by qpdf. The outputs are committed:
the tests never run this script.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write_pdf(path, objects):
    """objects: list of bytes, object i+1 is objects[i]; object 1 must be the catalog."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    with open(path, "wb") as f:
        f.write(out)


def stream(content):
    return b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"


def document(pages, extra_objects=()):
    """pages: list of (page dictionary entries, content bytes). Returns the object list."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", None,
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for entries, content in pages:
        page_number = len(objects) + 1
        kids.append(b"%d 0 R" % page_number)
        objects.append(b"<< /Type /Page /Parent 2 0 R " + entries +
                       b" /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" %
                       (page_number + 1))
        objects.append(stream(content))
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % len(kids)
    return objects + list(extra_objects)


def label(text, x, y, size):
    return b"BT /F1 %d Tf %d %d Td (%s) Tj ET\n" % (size, x, y, text)


# Three pages that exercise page sizes, /Rotate and /CropBox. Each has text (font
# antialiasing), thin lines and a curve (vector antialiasing) and flat colour.
PAGE1 = (b"1 0 0 rg 72 600 200 120 re f\n"
         b"0 0 1 rg 400 650 m 400 705 445 750 500 750 c 555 750 600 705 600 650 c f\n"
         b"0 g 0.3 w 72 500 m 540 420 l S 72 480 m 540 481 l S\n" +
         label(b"Page 1: Letter, not rotated", 72, 380, 24) +
         label(b"The quick brown fox jumps over the lazy dog 0123456789", 72, 340, 11))
PAGE2 = (b"0 0.6 0 rg 50 50 200 100 re f\n"
         b"0 g 1 w 300 700 m 500 800 l 480 760 l h S\n" +
         label(b"Page 2: A4, /Rotate 90 (this line runs down the image)", 50, 400, 18))
PAGE3 = (b"0.9 0.9 0 rg 0 0 300 200 re f 0 0 0.5 rg 60 60 40 40 re f\n" +
         label(b"Page 3: crop box", 70, 120, 14))


def main():
    write_pdf(os.path.join(HERE, "shapes.pdf"), document([
        (b"/MediaBox [0 0 612 792]", PAGE1),
        (b"/MediaBox [0 0 595 842] /Rotate 90", PAGE2),
        (b"/MediaBox [0 0 300 200] /CropBox [50 50 250 150] /Rotate 270", PAGE3),
    ]))
    # A page tree with no pages at all.
    write_pdf(os.path.join(HERE, "zero_pages.pdf"), [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"])
    # 200,000 pt is 2.8 km; at 200 DPI the square page would be 555,556 px a side.
    write_pdf(os.path.join(HERE, "huge_mediabox.pdf"), document([
        (b"/MediaBox [0 0 200000 200000]",
         b"0 0 1 rg 0 0 100000 100000 re f\n" + label(b"huge", 1000, 150000, 20000)),
        (b"/MediaBox [0 0 200000 50]", b"1 0 0 rg 0 0 100000 50 re f\n"),
    ]))
    # Page boxes Poppler accepts but that give no image: an empty media box (Poppler substitutes
    # Letter, as PDFium does), a width too long for a double (Poppler reads it as infinity), a
    # box given upside down with a negative /Rotate (normalised to 100 x 200, /Rotate 270).
    write_pdf(os.path.join(HERE, "odd_boxes.pdf"), document([
        (b"/MediaBox [0 0 0 0]", b"0 0 1 rg 10 10 100 100 re f\n"),
        (b"/MediaBox [0 0 " + b"9" * 400 + b" 100]", b""),
        (b"/MediaBox [100 200 0 0] /Rotate -90", b"1 0 0 rg 10 10 50 50 re f\n"),
    ]))
    shapes = os.path.join(HERE, "shapes.pdf")
    # A user password ("secret") is needed to open this one.
    subprocess.run(["qpdf", "--encrypt", "secret", "owner", "256", "--", shapes,
                    os.path.join(HERE, "encrypted_user.pdf")], check=True)
    # Only an owner password: anyone may open and render it.
    subprocess.run(["qpdf", "--encrypt", "", "owner", "256", "--", shapes,
                    os.path.join(HERE, "encrypted_owner.pdf")], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
