// Headless-browser check of the built static book: offline, quiet, and sliders that move figures.
//
// Usage: node tests/browser/check_site.mjs --site _build/html [--python python3] [--screenshots DIR]
//
// Serves the site with Python's http.server on 127.0.0.1 (a free port), opens every .html
// page in Debian's Chromium (never a downloaded browser) and fails when a page
//   - requests anything not on 127.0.0.1 (such requests are blocked and reported),
//   - logs a console error or throws, or gets an HTTP error / failed load from the site,
//   - has widget state but no rendered widgets, or a slider outside infer_lib.widgets,
//   - has an infer_lib.widgets slider that does not change the shown figure on ArrowRight (ArrowLeft
//     when it opens on its last position), or does not come back to the figure it opened on after
//     stepping fast to the end and back,
// and fails on these accessibility faults:
//   - an <img> in the article (widget frames included) without non-empty alt text,
//   - a heading that skips a level going down inside the article (h1 then h3),
//   - a slider handle that is not focusable, has no accessible name (aria-label, aria-labelledby
//     or a <label>), or whose value (aria-valuenow) the arrow keys do not change,
//   - an icon (<i class="fa-...">) that draws nothing: no glyph in its ::before, or an icon font
//     that did not load.
// Then it opens every page again on a phone's screen (PHONE_VIEWPORT) and fails when
//   - the page is wider than the screen (it scrolls sideways),
//   - a figure or slider frame in the article shows its smallest text under MIN_TEXT_CSS_PX: each
//     image carries the font size of its smallest text in its own pixels (infer_lib.figure_text),
//     scaled here by the width the image is shown at,
//   - a PNG or WebP figure in the article carries no such size (it was drawn without
//     infer_lib.plots.setup_book_figures or infer_lib.widgets, so it cannot be measured).
// Prints a JSON summary on stdout; exits 1 with the reasons on stderr when anything failed.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";

import { chromium } from "playwright-core";

const CHROMIUM_PATH = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const LOCAL_HOST = "127.0.0.1";
// Sphinx output folders that hold assets, not pages (_static/ has theme template fragments).
const ASSET_FOLDERS = ["_static", "_sources", "_images", "_downloads"];
const CONTAINER_SELECTOR = ".infer-frames";
const SLIDER_SELECTOR = ".infer-frames-slider";
const ANY_SLIDER_SELECTOR = ".widget-slider, .widget-hslider, .widget-vslider";
const ARTICLE_SELECTOR = "article.bd-article";
const ICON_SELECTOR = 'i[class*="fa-"]';
const WIDGET_RENDER_TIMEOUT_MS = 30_000;
// A phone: the width the course promises readable text at, in CSS pixels.
const PHONE_VIEWPORT = { width: 390, height: 844 };
// Smallest readable text on that phone, in CSS pixels.
const MIN_TEXT_CSS_PX = 9;
const FIGURE_CHANGE_TIMEOUT_MS = 5_000;

/** List every .html page under `root` as site-relative POSIX paths, sorted (asset folders skipped). */
function listHtmlPages(root) {
  const pages = [];
  const walk = (folder) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      if (folder === root && ASSET_FOLDERS.includes(name)) continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".html")) pages.push(relative(root, path).split(sep).join("/"));
    }
  };
  walk(root);
  return pages;
}

/** Start `python -m http.server` on a free 127.0.0.1 port; resolve to { server, baseUrl }. */
function startServer(python, root) {
  return new Promise((resolvePromise, reject) => {
    const server = spawn(python, ["-u", "-m", "http.server", "0", "--bind", LOCAL_HOST, "--directory", root], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const timer = setTimeout(() => reject(new Error(`http.server did not start: ${output}`)), 15_000);
    const onData = (chunk) => {
      output += chunk.toString();
      const match = output.match(/port (\d+)/);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ server, baseUrl: `http://${LOCAL_HOST}:${match[1]}/` });
      }
    };
    server.stdout.on("data", onData);
    server.stderr.on("data", () => {}); // one access-log line per request: not needed
    server.on("error", reject);
    server.on("exit", (code) => reject(new Error(`http.server exited with ${code}: ${output}`)));
  });
}

/** True when `url` is served from the local test server (or is page-internal: data:, blob:, about:). */
function isLocal(url) {
  const parsed = new URL(url);
  if (["data:", "blob:", "about:"].includes(parsed.protocol)) return true;
  return parsed.hostname === LOCAL_HOST;
}

/** SHA-256 (hex) of the bytes behind the one visible <img> in `container`, or an error string. */
async function visibleFigureHash(container) {
  return container.evaluate(async (element) => {
    const visible = [...element.querySelectorAll("img")].filter((img) => img.checkVisibility());
    if (visible.length !== 1) return { error: `expected 1 visible figure, found ${visible.length}` };
    const img = visible[0];
    if (!img.complete || img.naturalWidth === 0) return { error: "visible figure did not load" };
    const bytes = await (await fetch(img.src)).arrayBuffer();
    const digest = await crypto.subtle.digest("SHA-256", bytes);
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    return { hash: hex, width: img.naturalWidth, height: img.naturalHeight };
  });
}

/** Wait until one loaded figure is visible and its hash differs from `before`; return the last state seen. */
async function waitForFigureChange(container, before) {
  const deadline = Date.now() + FIGURE_CHANGE_TIMEOUT_MS;
  let now = await visibleFigureHash(container);
  while ((now.error || now.hash === before) && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 100));
    now = await visibleFigureHash(container);
  }
  return now;
}

/** Press ArrowRight to the end and ArrowLeft back to the opening position `start` without pausing (console must stay quiet). */
async function stepFastAndBack(page, container, handle, minimum, maximum, start, firstHash) {
  await handle.focus();
  for (let step = minimum; step < maximum; step += 1) await page.keyboard.press("ArrowRight");
  for (let step = start; step < maximum; step += 1) await page.keyboard.press("ArrowLeft");
  const deadline = Date.now() + FIGURE_CHANGE_TIMEOUT_MS;
  let now = await visibleFigureHash(container);
  while ((now.error || now.hash !== firstHash) && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 100));
    now = await visibleFigureHash(container);
  }
  return now;
}

/** Accessibility faults of the loaded page's article: images without alt text, headings that skip a level. */
async function articleProblems(page) {
  return page.evaluate((selector) => {
    const article = document.querySelector(selector);
    if (!article) return [];
    const problems = [];
    for (const img of article.querySelectorAll("img")) {
      if (!(img.getAttribute("alt") ?? "").trim()) {
        const source = (img.getAttribute("src") ?? "").slice(0, 60);
        problems.push(`image without alt text: ${source}${source.length === 60 ? "..." : ""}`);
      }
    }
    let previous = 0;
    for (const heading of article.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
      const level = Number(heading.tagName[1]);
      if (level > previous + 1) {
        const text = heading.textContent.trim().slice(0, 50);
        problems.push(`heading h${level} "${text}" follows ${previous ? `h${previous}` : "no heading"} (a level skipped)`);
      }
      previous = level;
    }
    return problems;
  }, ARTICLE_SELECTOR);
}

/** Icons that draw nothing: an <i class="fa-..."> without a glyph, or no icon font loaded. */
async function iconProblems(page) {
  return page.evaluate(async (selector) => {
    const icons = [...document.querySelectorAll(selector)];
    if (icons.length === 0) return [];
    await document.fonts.ready;
    const problems = [];
    for (const icon of icons) {
      const glyph = getComputedStyle(icon, "::before").content;
      if (!glyph || glyph === "none" || glyph === "normal" || glyph === '""') problems.push(`icon ${icon.className} has no glyph`);
    }
    const loaded = [...document.fonts].filter((face) => /Font Awesome/.test(face.family) && face.status === "loaded");
    if (loaded.length === 0) problems.push(`${icons.length} icon(s) but no Font Awesome font loaded`);
    return problems;
  }, ICON_SELECTOR);
}

/** Accessible name of a slider handle: aria-label, the text aria-labelledby points at, or a <label for>. */
async function accessibleName(handle) {
  return handle.evaluate((element) => {
    const label = element.getAttribute("aria-label");
    if (label && label.trim()) return label.trim();
    const ids = (element.getAttribute("aria-labelledby") ?? "").split(/\s+/).filter(Boolean);
    const text = ids.map((id) => document.getElementById(id)?.textContent ?? "").join(" ").trim();
    if (text) return text;
    if (element.id) {
      const forLabel = document.querySelector(`label[for="${CSS.escape(element.id)}"]`);
      if (forLabel && forLabel.textContent.trim()) return forLabel.textContent.trim();
    }
    return "";
  });
}

/** Press ArrowRight on every slider of one infer_lib.widgets container; return one result per slider. */
async function exerciseContainer(page, container, label, screenshotDir, failures) {
  const results = [];
  const sliders = await container.$$(SLIDER_SELECTOR);
  if (sliders.length === 0) failures.push(`${label}: frames widget without a slider`);
  for (const [index, slider] of sliders.entries()) {
    const name = `${label} slider ${index + 1}`;
    const handle = await slider.$(".noUi-handle");
    const readout = await slider.$(".widget-readout");
    if (!handle) {
      failures.push(`${name}: no slider handle (.noUi-handle) rendered`);
      continue;
    }
    const [minimum, maximum] = await Promise.all(["aria-valuemin", "aria-valuemax"].map((a) => handle.getAttribute(a)));
    if (minimum === maximum) {
      results.push({ slider: name, skipped: "single position: nothing to step to" });
      continue;
    }
    const before = await visibleFigureHash(container);
    if (before.error) {
      failures.push(`${name}: ${before.error} before stepping`);
      continue;
    }
    const readoutBefore = readout ? await readout.innerText() : null;
    const shotBefore = await container.screenshot();
    // A slider may open on any position (an informative one): step right, or left from the last.
    const start = Number(await handle.getAttribute("aria-valuenow"));
    const name_ = await accessibleName(handle);
    if (!name_) failures.push(`${name}: slider handle has no accessible name (aria-label, aria-labelledby or <label>)`);
    await handle.focus();
    const focused = await handle.evaluate((element) => element.tabIndex >= 0 && document.activeElement === element);
    if (!focused) failures.push(`${name}: slider handle cannot take the keyboard focus (tabindex)`);
    await page.keyboard.press(start < Number(maximum) ? "ArrowRight" : "ArrowLeft");
    const after = await waitForFigureChange(container, before.hash);
    const valueAfter = Number(await handle.getAttribute("aria-valuenow"));
    if (valueAfter === start) failures.push(`${name}: the arrow key left aria-valuenow at ${start}`);
    const shotAfter = await container.screenshot();
    const readoutAfter = readout ? await readout.innerText() : null;
    const screenshotsDiffer = !shotBefore.equals(shotAfter);
    if (screenshotDir) {
      const stem = name.replace(/[^A-Za-z0-9]+/g, "_");
      writeFileSync(join(screenshotDir, `${stem}_before.png`), shotBefore);
      writeFileSync(join(screenshotDir, `${stem}_after.png`), shotAfter);
    }
    if (after.error) failures.push(`${name}: ${after.error} after ArrowRight`);
    else if (after.hash === before.hash) failures.push(`${name}: ArrowRight did not change the figure`);
    if (!screenshotsDiffer) failures.push(`${name}: widget screenshot identical before and after ArrowRight`);
    if (readoutBefore === readoutAfter) failures.push(`${name}: readout stayed ${JSON.stringify(readoutBefore)}`);
    const returned = await stepFastAndBack(page, container, handle, Number(minimum), Number(maximum), start, before.hash);
    if (returned.error) failures.push(`${name}: ${returned.error} after stepping fast and back`);
    else if (returned.hash !== before.hash) failures.push(`${name}: stepping to the end and back did not restore the first figure`);
    results.push({
      slider: name,
      accessible_name: name_,
      readout: [readoutBefore, readoutAfter],
      figure_sha256: [before.hash.slice(0, 12), (after.hash ?? "").slice(0, 12)],
      figure_px: [before.width, before.height],
      screenshots_differ: screenshotsDiffer,
    });
  }
  return results;
}

/** Load one page, record its problems in `failures`, exercise its sliders; return the page summary. */
async function checkPage(context, baseUrl, path, screenshotDir, failures) {
  const page = await context.newPage();
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  page.on("requestfailed", (request) => {
    if (isLocal(request.url())) problems.push(`failed request ${request.url()}: ${request.failure()?.errorText}`);
  });
  const started = Date.now();
  await page.goto(baseUrl + path, { waitUntil: "networkidle", timeout: 60_000 });
  const hasWidgetState = (await page.$('script[type="application/vnd.jupyter.widget-state+json"]')) !== null;
  const widgets = [];
  if (hasWidgetState) {
    try {
      await page.waitForSelector(".jupyter-widgets", { timeout: WIDGET_RENDER_TIMEOUT_MS });
    } catch {
      problems.push("page has widget state but no widget rendered (is the widget JavaScript served?)");
    }
    const containers = await page.$$(CONTAINER_SELECTOR);
    for (const [index, container] of containers.entries()) {
      await container.scrollIntoViewIfNeeded();
      widgets.push(...(await exerciseContainer(page, container, `widget ${index + 1}`, screenshotDir, problems)));
    }
    const strays = await page.$$eval(
      ANY_SLIDER_SELECTOR,
      (nodes, selector) => nodes.filter((node) => !node.closest(selector)).length,
      CONTAINER_SELECTOR,
    );
    if (strays > 0) problems.push(`${strays} slider(s) not made by infer_lib.widgets: their figures cannot change without a kernel`);
  }
  problems.push(...(await articleProblems(page)), ...(await iconProblems(page)));
  await page.close();
  failures.push(...problems.map((problem) => `${path}: ${problem}`));
  return { page: path, load_ms: Date.now() - started, widget_state: hasWidgetState, sliders: widgets, problems };
}

/** On a phone: does the page scroll sideways, and how small is each article figure's smallest text (CSS px)? */
async function phoneProblems(context, baseUrl, path) {
  const page = await context.newPage();
  await page.goto(baseUrl + path, { waitUntil: "networkidle", timeout: 60_000 });
  if ((await page.$('script[type="application/vnd.jupyter.widget-state+json"]')) !== null) {
    await page.waitForSelector(".jupyter-widgets", { timeout: WIDGET_RENDER_TIMEOUT_MS }).catch(() => {});
  }
  const measured = await page.evaluate(async ({ article, container }) => {
    /** The font size of the smallest text stamped in a PNG (tEXt) or WebP (XMP), or null. */
    const stampedTextPx = (buffer) => {
      const bytes = new Uint8Array(buffer);
      const text = (from, to) => String.fromCharCode(...bytes.subarray(from, to));
      if (bytes[0] === 0x89 && text(1, 4) === "PNG") {
        const view = new DataView(buffer);
        for (let offset = 8; offset + 8 <= bytes.length; ) {
          const length = view.getUint32(offset);
          if (text(offset + 4, offset + 8) === "tEXt") {
            const data = text(offset + 8, offset + 8 + length);
            const [key, value] = data.split("\u0000");
            if (key === "infer-smallest-text-px") return Number(value);
          }
          offset += 12 + length;
        }
        return null;
      }
      if (text(0, 4) === "RIFF" && text(8, 12) === "WEBP") {
        const match = /infer-smallest-text-px="([0-9.]+)"/.exec(new TextDecoder("latin1").decode(bytes));
        return match ? Number(match[1]) : null;
      }
      return undefined; // not a raster this check measures (an SVG icon, say)
    };
    const root = document.scrollingElement;
    const result = { page_width: root.scrollWidth, figures: [] };
    const main = document.querySelector(article);
    if (!main) return result;
    for (const img of main.querySelectorAll("img")) {
      // The theme's and Sphinx's own images (icons, the module index's toggles) are not figures.
      if (new URL(img.currentSrc || img.src, document.baseURI).pathname.includes("/_static/")) continue;
      const frames = img.closest(container);
      const shown = img.checkVisibility() ? img
        : frames ? [...frames.querySelectorAll("img")].find((other) => other.checkVisibility()) : null;
      if (!shown || shown.naturalWidth === 0) continue;
      let stamp;
      try {
        stamp = stampedTextPx(await (await fetch(img.currentSrc || img.src)).arrayBuffer());
      } catch {
        continue;
      }
      if (stamp === undefined) continue;
      const scale = shown.getBoundingClientRect().width / shown.naturalWidth;
      result.figures.push({
        alt: (img.getAttribute("alt") ?? "").slice(0, 70),
        in_slider: Boolean(frames),
        text_css_px: stamp === null ? null : Math.round(stamp * scale * 10) / 10,
      });
    }
    return result;
  }, { article: ARTICLE_SELECTOR, container: CONTAINER_SELECTOR });
  await page.close();
  const problems = [];
  if (measured.page_width > PHONE_VIEWPORT.width + 1) {
    problems.push(`on a ${PHONE_VIEWPORT.width} px screen the page is ${measured.page_width} px wide (it scrolls sideways)`);
  }
  const seen = new Set();
  for (const figure of measured.figures) {
    const what = `${figure.in_slider ? "slider frame" : "figure"} "${figure.alt}"`;
    if (seen.has(what)) continue; // a slider's frames share one verdict
    if (figure.text_css_px === null) {
      seen.add(what);
      problems.push(`${what} carries no text size: draw it after infer_lib.plots.setup_book_figures() or with infer_lib.widgets`);
    } else if (figure.text_css_px < MIN_TEXT_CSS_PX) {
      seen.add(what);
      problems.push(`${what}: smallest text ${figure.text_css_px} CSS px on a ${PHONE_VIEWPORT.width} px screen ` +
        `(at least ${MIN_TEXT_CSS_PX}: a narrower figure or larger type)`);
    }
  }
  const sizes = measured.figures.map((figure) => figure.text_css_px).filter((size) => size !== null);
  return { problems, page_width: measured.page_width, figures: measured.figures.length,
    smallest_text_css_px: sizes.length ? Math.min(...sizes) : null };
}

/** Run the whole check; return the exit status. */
async function main() {
  const { values } = parseArgs({
    options: {
      site: { type: "string" },
      python: { type: "string", default: "python3" },
      screenshots: { type: "string" },
    },
  });
  if (!values.site) {
    console.error("usage: node tests/browser/check_site.mjs --site _build/html [--python PY] [--screenshots DIR]");
    return 2;
  }
  const root = resolve(values.site);
  const pages = listHtmlPages(root);
  if (pages.length === 0) {
    console.error(`no .html pages under ${root}: build the book first`);
    return 2;
  }
  const failures = [];
  const externalRequests = [];
  const { server, baseUrl } = await startServer(values.python, root);
  const profile = mkdtempSync(join(tmpdir(), "check-site-profile-"));
  const phoneProfile = mkdtempSync(join(tmpdir(), "check-site-phone-"));
  let context;
  let phone;
  const summary = { site: root, base_url: baseUrl, pages: [] };
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1280, height: 900 },
    });
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (isLocal(url)) return route.continue();
      externalRequests.push(url);
      return route.abort("blockedbyclient");
    });
    for (const path of pages) {
      summary.pages.push(await checkPage(context, baseUrl, path, values.screenshots, failures));
    }
    phone = await chromium.launchPersistentContext(phoneProfile, {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: PHONE_VIEWPORT,
      isMobile: true,
      hasTouch: true,
    });
    await phone.route("**/*", (route) => (isLocal(route.request().url()) ? route.continue() : route.abort("blockedbyclient")));
    for (const [index, path] of pages.entries()) {
      const result = await phoneProblems(phone, baseUrl, path);
      summary.pages[index].phone = { page_width: result.page_width, figures: result.figures,
        smallest_text_css_px: result.smallest_text_css_px };
      failures.push(...result.problems.map((problem) => `${path}: ${problem}`));
    }
  } finally {
    if (context) await context.close();
    if (phone) await phone.close();
    rmSync(phoneProfile, { recursive: true, force: true });
    server.kill();
    rmSync(profile, { recursive: true, force: true });
  }
  for (const url of new Set(externalRequests)) failures.push(`request left ${LOCAL_HOST} (blocked): ${url}`);
  summary.external_requests = [...new Set(externalRequests)];
  summary.sliders_checked = summary.pages.reduce((n, page) => n + page.sliders.filter((s) => !s.skipped).length, 0);
  summary.failures = failures;
  console.log(JSON.stringify(summary, null, 2));
  if (failures.length > 0) {
    console.error(`check_site: ${failures.length} failure(s):\n  - ${failures.join("\n  - ")}`);
    return 1;
  }
  console.error(
    `check_site: OK, ${pages.length} pages, ${summary.sliders_checked} sliders moved their figures from the keyboard, ` +
      "no external requests, images with alt text, headings in order, named sliders, icons drawn, " +
      `no page wider than a ${PHONE_VIEWPORT.width} px phone and no figure text under ${MIN_TEXT_CSS_PX} CSS px on it`,
  );
  return 0;
}

main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(`check_site: crashed: ${error.stack ?? error}`);
    process.exit(1);
  },
);
