"""Page weight of the built site as a browser downloads it: bytes of every resource each page loads.

Serves the built site (``_build/html``, or the folder in ``SITE_DIR``) with
Python's http.server on 127.0.0.1, opens every page in Debian's headless
Chromium (driven by playwright-core from node_modules, one fresh profile per
page, so nothing comes from a cache), waits until the widgets have rendered and
the network is idle, and records the body of every response: the HTML, scripts,
style sheets, fonts, images, the widget bundle and MathJax. Each body is also
gzip-compressed (zlib level 6, what web servers commonly use) to give the bytes
a server that compresses would send.

Prints, per page (``<page>`` is the path under the site with every
non-alphanumeric character replaced by ``_``)::

    page_weight_<page>_bytes: N           sum of the uncompressed bodies
    page_weight_<page>_gzip_bytes: N      sum of the gzip-compressed bodies
    page_weight_<page>_requests: N
    page_resource_<page>: <path> N bytes, G gzip   (the heaviest resources)

Prints figures only and never asserts. Needs ``make book`` (or a private build
pointed at with ``SITE_DIR``), ``npm ci`` and /usr/bin/chromium. Run from anywhere:

    SITE_DIR=/tmp/site/_build/html .venv/bin/python bench/bench_site.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("SITE_DIR", REPO_ROOT / "_build" / "html")).resolve()
CHROMIUM = "/usr/bin/chromium"
#: Sphinx output folders that hold assets, not pages.
ASSET_FOLDERS = {"_static", "_sources", "_images", "_downloads"}
#: How many of each page's resources to list, heaviest (compressed) first.
RESOURCES_LISTED = int(os.environ.get("RESOURCES_LISTED", "6"))
#: Seconds allowed for loading every page.
TIMEOUT_S = 1800

#: Node script (ES module, read from stdin, resolved against the repository root for playwright-core).
#: argv (after "-"): site root, base URL, Chromium path, then the pages; prints one JSON object per page.
LOADER = r"""
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";

const [root, baseUrl, chromiumPath, ...pages] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  for (const path of pages) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.route("**/*", (route) =>
      new URL(route.request().url()).hostname === "127.0.0.1" ? route.continue() : route.abort("blockedbyclient"));
    const page = await context.newPage();
    const pending = [];
    page.on("response", (response) => {
      pending.push((async () => {
        const url = response.url();
        if (!url.startsWith("http")) return null;
        let body;
        try { body = await response.body(); } catch { return null; }  // redirects have no body
        return { url, status: response.status(), bytes: body.length, gzip_bytes: gzipSync(body, { level: 6 }).length };
      })());
    });
    await page.goto(baseUrl + path, { waitUntil: "networkidle", timeout: 120000 });
    if (await page.$('script[type="application/vnd.jupyter.widget-state+json"]')) {
      await page.waitForSelector(".jupyter-widgets", { timeout: 30000 }).catch(() => {});
    }
    // Lazy images and fonts load as the reader scrolls: scroll to the end, then wait for quiet.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.evaluate(() => window.MathJax?.startup?.promise ?? null).catch(() => {});
    await page.waitForLoadState("networkidle");
    await page.waitForTimeout(500);
    const resources = (await Promise.all(pending)).filter(Boolean);
    console.log(JSON.stringify({ page: path, resources }));
    await context.close();
  }
} finally {
  await browser.close();
}
"""


def list_pages(root: Path) -> list[str]:
    """Return every .html page under ``root`` as site-relative POSIX paths, asset folders and redirects skipped."""
    pages = []
    for path in sorted(root.rglob("*.html")):
        relative = path.relative_to(root)
        if relative.parts[0] in ASSET_FOLDERS:
            continue
        head = path.read_text(encoding="utf-8", errors="replace")[:2000]
        if re.search(r'<meta[^>]+http-equiv="refresh"', head, flags=re.IGNORECASE):
            continue  # index.html only redirects to the first page
        pages.append(relative.as_posix())
    return pages


def page_key(path: str) -> str:
    """Return the figure-name form of a page path: ``chapters/01_x.html`` -> ``chapters_01_x``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", path.removesuffix(".html")).strip("_")


def start_server(root: Path) -> tuple[subprocess.Popen[str], str]:
    """Start ``python -m http.server`` on a free 127.0.0.1 port; return the process and its base URL."""
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    match = re.search(r"port (\d+)", line)
    if match is None:
        server.kill()
        raise SystemExit(f"http.server did not start: {line!r}")
    return server, f"http://127.0.0.1:{match.group(1)}/"


def resource_path(url: str, base_url: str) -> str:
    """Return a resource's path under the site, without the query string."""
    return url.removeprefix(base_url).split("?")[0].split("#")[0]


def main() -> None:
    """Load every page, print its total bytes (raw and gzip) and its heaviest resources."""
    pages = list_pages(SITE) if SITE.is_dir() else []
    if not pages:
        print(f"site_pages: 0 (no pages under {SITE}; run `make book` first or set SITE_DIR)")
        return
    node = shutil.which("node")
    if node is None or not (REPO_ROOT / "node_modules" / "playwright-core").is_dir() or not Path(CHROMIUM).is_file():
        print("page_weight: skipped (needs node, `npm ci` and /usr/bin/chromium)")
        return
    server, base_url = start_server(SITE)
    try:
        completed = subprocess.run(
            [node, "--input-type=module", "-", str(SITE), base_url, CHROMIUM, *pages],
            input=LOADER,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    finally:
        server.kill()
        server.wait()
    if completed.returncode != 0:
        print(f"page_weight: failed (node exit {completed.returncode}): {completed.stderr.strip()[-2000:]}")
        return
    print(f"site_dir: {SITE}")
    print(f"site_pages: {len(pages)}")
    for line in completed.stdout.splitlines():
        record = json.loads(line)
        key = page_key(record["page"])
        resources = [r for r in record["resources"] if r["status"] < 400]
        print(f"page_weight_{key}_bytes: {sum(r['bytes'] for r in resources)}")
        print(f"page_weight_{key}_gzip_bytes: {sum(r['gzip_bytes'] for r in resources)}")
        print(f"page_weight_{key}_requests: {len(resources)}")
        for r in sorted(resources, key=lambda r: -r["gzip_bytes"])[:RESOURCES_LISTED]:
            print(f"page_resource_{key}: {resource_path(r['url'], base_url)} {r['bytes']} bytes, {r['gzip_bytes']} gzip")
        for r in record["resources"]:
            if r["status"] >= 400:
                print(f"page_missing_{key}: HTTP {r['status']} {resource_path(r['url'], base_url)}")


if __name__ == "__main__":
    main()
