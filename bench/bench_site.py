"""Page weight of the built site: bytes of every chapter page, slider frames included.

Reads _build/html (run `make book` first) and prints `name: value` lines; the
budget is about 3 MB per chapter page. Never asserts anything.
"""

from __future__ import annotations

from pathlib import Path

SITE = Path(__file__).resolve().parents[1] / "_build" / "html"


def main() -> None:
    pages = sorted((SITE / "chapters").glob("*.html"))
    if not pages:
        print(f"site_pages: 0 (no {SITE}/chapters/*.html; run `make book` first)")
        return
    for page in pages:
        print(f"page_bytes_{page.stem}: {page.stat().st_size}")
    print(f"site_html_bytes_total: {sum(p.stat().st_size for p in SITE.rglob('*.html'))}")


if __name__ == "__main__":
    main()
