"""Copy the JavaScript the static book loads (widgets, MathJax) from node_modules into book/_widgets/vendor/.

Run ``npm ci`` first. Only the files a page actually requests are copied (the
html-manager package ships ~25 MB, of which a page loads one script and one
font); the destination is git-ignored and rebuilt by ``make``. The versions copied
are checked against package-lock.json, so a stale node_modules is caught here.

The widget script is html-manager's standalone, already minified ``dist/embed.js``
(1.9 MB, 0.46 MB gzip-compressed), not ``dist/embed-amd.js`` with RequireJS: the AMD
build (3.6 MB, 0.92 MB gzip-compressed, also minified) exists so that third-party widget
modules can be fetched at run time, and it ships the built-in widget modules twice (as
AMD modules and again inside the manager). The book uses only the built-in widgets.

Usage: python scripts/vendor_widgets.py [--repo-root PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

#: Git-ignored folder, relative to the repository root; its parent book/_widgets is in ``html_static_path``.
VENDOR_DIR = Path("book/_widgets/vendor")

#: File names webpack gave Font Awesome 5's fa-solid-900, fa-brands-400 and fa-regular-400 woff2 fonts
#: inside @jupyter-widgets/html-manager 1.0.15's dist/. The widget CSS declares all three faces, and its
#: ``.fas``/``.fab`` rules also reach the theme's icons; a browser downloads only the faces a page draws.
WIDGET_FONTS = ("1551f4f60c37af51121f.woff2", "d878b0a6a1144760244f.woff2", "7a3337626410ca2f4071.woff2")

#: (npm package, file inside the package, destination relative to VENDOR_DIR).
VENDORED_FILES: tuple[tuple[str, str, str], ...] = (
    ("@jupyter-widgets/html-manager", "dist/embed.js", "embed.js"),
    # The Font Awesome 5 fonts the widget CSS loads (woff2 is the first format it tries); embed.js
    # resolves them next to its own URL (webpack's automatic public path).
    *(("@jupyter-widgets/html-manager", f"dist/{font}", font) for font in WIDGET_FONTS),
    # MathJax 3 for the book's formulas (Sphinx's mathjax_path points here, not at a CDN);
    # its CHTML output loads these fonts relative to the script.
    ("mathjax", "es5/tex-mml-chtml.js", "mathjax/tex-mml-chtml.js"),
    ("mathjax", "es5/output/chtml/fonts/woff-v2", "mathjax/output/chtml/fonts/woff-v2"),
)


def locked_version(repo_root: Path, package: str) -> str:
    """Return the version of ``package`` pinned in package-lock.json."""
    lock = json.loads((repo_root / "package-lock.json").read_text(encoding="utf-8"))
    entry = lock["packages"].get(f"node_modules/{package}")
    if entry is None:
        raise SystemExit(f"{package} is not in package-lock.json; add it to package.json and run npm install.")
    return str(entry["version"])


def installed_version(repo_root: Path, package: str) -> str:
    """Return the version of ``package`` installed under node_modules, or fail with a hint."""
    manifest = repo_root / "node_modules" / package / "package.json"
    if not manifest.is_file():
        raise SystemExit(f"{manifest} is missing: run `npm ci` in {repo_root} first.")
    return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])


def vendor(repo_root: Path) -> list[Path]:
    """Copy VENDORED_FILES into VENDOR_DIR (replacing what was there) and return the copied paths."""
    for package in sorted({package for package, _source, _destination in VENDORED_FILES}):
        installed, locked = installed_version(repo_root, package), locked_version(repo_root, package)
        if installed != locked:
            raise SystemExit(f"node_modules has {package} {installed} but package-lock.json pins {locked}: run `npm ci`.")
    destination_root = repo_root / VENDOR_DIR
    if destination_root.exists():
        shutil.rmtree(destination_root)
    copied = []
    for package, source, destination in VENDORED_FILES:
        target = destination_root / destination
        target.parent.mkdir(parents=True, exist_ok=True)
        origin = repo_root / "node_modules" / package / source
        if origin.is_dir():
            shutil.copytree(origin, target)
            copied.extend(sorted(path for path in target.rglob("*") if path.is_file()))
        else:
            shutil.copyfile(origin, target)
            copied.append(target)
    return copied


def main() -> None:
    """Parse the command line, vendor the files and list them with their sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo-root", type=Path, default=Path(__file__).resolve().parents[1])
    arguments = parser.parse_args()
    for path in vendor(arguments.repo_root.resolve()):
        print(f"vendored {path.relative_to(arguments.repo_root.resolve())} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
