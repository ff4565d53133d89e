"""How small a figure's text is, written into the image itself so the site's browser test can read it.

A figure is a raster: once drawn, nothing on the page says how tall its letters are.
So the smallest text of every figure is measured when it is drawn, in the image's own
pixels, and stored in the image file: a PNG ``tEXt`` chunk, or a WebP ``XMP`` chunk
(``TEXT_SIZE_KEY``). The browser test opens each page at a phone's width, reads that
number back from every image, and scales it by the width the image is shown at: text
drawn 20 image pixels tall in a 1,200-pixel-wide image shown 360 CSS pixels wide is 6
CSS pixels tall on that screen, too small to read.

``smallest_text_px`` measures; ``stamp_text_size`` and ``read_text_size`` write and read
the number without decoding the image. ``infer_lib.page.images`` keeps the stamp when it
reduces a PNG's palette or re-encodes it as WebP. Introduced in ch-prefill-decode.
"""

from __future__ import annotations

import re
import struct
import zlib

from matplotlib.figure import Figure
from matplotlib.text import Text

#: Name of the stored value: the smallest text's font size in image pixels.
TEXT_SIZE_KEY = "infer-smallest-text-px"
#: Points per inch: a font size in points times dpi / 72 is its size in pixels.
POINTS_PER_INCH = 72.0
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_XMP_PATTERN = re.compile(rb'infer-smallest-text-px="([0-9.]+)"')


def smallest_text_px(figure: Figure, dpi: float) -> float | None:
    """Return the font size of the smallest visible, non-empty text of ``figure`` drawn at ``dpi``, in pixels.

    Every ``Text`` artist counts: titles, axis labels, tick labels, legends, annotations.
    A font size is the height of the type's em square, so a 10-point label at 100 dpi is
    10 x 100 / 72 = 13.9 pixels. Returns None for a figure with no text.
    """
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi!r}.")
    sizes = [artist.get_fontsize() for artist in figure.findobj(Text)
             if artist.get_visible() and artist.get_text().strip() and _shown(artist)]
    if not sizes:
        return None
    return min(sizes) * dpi / POINTS_PER_INCH


def _shown(artist: Text) -> bool:
    """False for text whose every ancestor is not visible (a hidden axes' labels)."""
    axes = artist.axes
    return axes is None or axes.get_visible()


def stamp_text_size(image: bytes, text_px: float | None) -> bytes:
    """Return the PNG or WebP ``image`` with ``text_px`` stored under ``TEXT_SIZE_KEY`` (unchanged pixels).

    A PNG gains a ``tEXt`` chunk before its end; a WebP written by ``infer_lib.page.images``
    carries it in its XMP chunk already, so only PNGs are stamped here. ``None`` (no text)
    returns the image as it is.
    """
    if text_px is None:
        return image
    if not image.startswith(_PNG_SIGNATURE):
        raise ValueError("stamp_text_size stamps PNG bytes only; a WebP gets its stamp from "
                         "infer_lib.page.images.lossless_webp(..., text_px=...).")
    if read_text_size(image) is not None:
        raise ValueError("this PNG already carries a text size; stamp each image once.")
    payload = TEXT_SIZE_KEY.encode("latin-1") + b"\x00" + f"{text_px:.2f}".encode("ascii")
    chunk = struct.pack(">I", len(payload)) + b"tEXt" + payload
    chunk += struct.pack(">I", zlib.crc32(b"tEXt" + payload) & 0xFFFFFFFF)
    end = image.rfind(b"IEND") - 4  # the IEND chunk's length field
    if end < len(_PNG_SIGNATURE):
        raise ValueError("not a complete PNG: no IEND chunk.")
    return image[:end] + chunk + image[end:]


def read_text_size(image: bytes) -> float | None:
    """Return the text size stamped in a PNG or WebP ``image``, or None when it carries none."""
    if image.startswith(_PNG_SIGNATURE):
        offset = len(_PNG_SIGNATURE)
        while offset + 8 <= len(image):
            (length,) = struct.unpack(">I", image[offset:offset + 4])
            kind = image[offset + 4:offset + 8]
            data = image[offset + 8:offset + 8 + length]
            if kind == b"tEXt":
                keyword, _, value = data.partition(b"\x00")
                if keyword.decode("latin-1") == TEXT_SIZE_KEY:
                    return float(value.decode("ascii"))
            offset += 12 + length
        return None
    if image[:4] == b"RIFF" and image[8:12] == b"WEBP":
        match = _XMP_PATTERN.search(image)
        return float(match.group(1)) if match else None
    return None


def text_size_xmp(text_px: float) -> bytes:
    """Return the XMP packet that stores ``text_px`` in a WebP (read back by ``read_text_size``)."""
    return (f'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            f'<rdf:Description {TEXT_SIZE_KEY}="{text_px:.2f}"/></rdf:RDF></x:xmpmeta>').encode("ascii")
