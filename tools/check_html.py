"""Open every page of the rendered book in headless Chromium and report what a reader would
see broken: JavaScript errors, math that MathJax did not render (or rendered as an error),
images that did not load, failed requests (including any to another host: the book must
work offline), internal links to a missing page or anchor, Markdown table syntax shown as
text, a raw Python dict printed as a result, a missing or malformed Binder link (or any Colab link) on
notebook pages, content wider than a phone's screen (the page itself must never scroll
sideways: wide equations and tables scroll in their own box), claims-ledger rows whose claim
id or verdict is off a phone's screen, claims-ledger columns a desktop reader would have to
scroll to, a page whose first phone screen shows no number, a table whose caption is cut or (on the
book's own pages) whose first number is off the screen (at either width), a figure whose text renders
below 9 px as shown (at either width, toggles opened) or that does not record its text size, two
elements with one id, verdict badges that name no claim,
notebook tables that show pandas' 0..N row index, an answer box of more than ANSWER_WORDS words,
and, on the landing page, an answer box or tally of verdicts that does not end on a phone's
first screen.

Usage: python tools/check_html.py _build/html [--chromium /usr/bin/chromium] [--screenshots DIR]
Exit status 0 when every page is clean, 1 otherwise (each problem is printed).
With --screenshots, also saves the landing page, a chapter, a notebook page and the ledger at
desktop and phone widths (PNG), and checks that the landing page's answer is on the first screen.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SKIP_DIRS = {"_static", "_sources", "reports", "_images", ".doctrees", "_sphinx_design_static"}
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
SCREENSHOT_PAGES = {
    "landing": "book/intro.html",
    "chapter": "book/paper_a/a3_noise.html",
    "notebook": "notebooks/a3_noise.html",
    "ledger": "book/claims_ledger.html",
}

# Runs in the page: math that MathJax left as TeX, MathJax error nodes, broken images, links.
PAGE_PROBE = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const math = Array.from(document.querySelectorAll('.math'));
  const unrendered = math.filter(el => !el.querySelector('mjx-container')).map(el => el.textContent.slice(0, 60));
  const merrors = Array.from(document.querySelectorAll('mjx-merror'))
    .map(el => el.getAttribute('data-mjx-error') || el.textContent.slice(0, 60));
  const images = Array.from(document.images).filter(img => !img.complete || img.naturalWidth === 0).map(img => img.src);
  const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
  const article = document.querySelector('article') || document.body || document.documentElement;
  const prose = article.cloneNode(true);
  prose.querySelectorAll('pre, code, script, style, .highlight').forEach(el => el.remove());
  const markdown = (prose.textContent.match(/\|\s*:?-{3,}:?\s*\|/g) || []).slice(0, 3);
  const dicts = Array.from(document.querySelectorAll('.cell_output pre, .output pre'))
    .map(el => el.textContent.trim()).filter(t => /^\{\s*['"]/.test(t)).map(t => t.slice(0, 60));
  const launch = Array.from(document.querySelectorAll('a[href*="mybinder.org"], a[href*="colab.research.google.com"]'))
    .map(a => a.href);
  const notebook = !!document.querySelector('.cell_output, div.cell');
  const ids = Array.from(document.querySelectorAll('[id]')).map(el => el.id);
  const twice = ids.filter((id, k) => ids.indexOf(id) !== k).slice(0, 3);
  return {unrendered, merrors, images, links, markdown, dicts, launch, notebook, twice,
          mathjax: !!(window.MathJax && MathJax.startup)};
}
"""

# Runs in the page at phone width: null when the page fits, else up to three elements that stick out.
OVERFLOW_PROBE = """
() => {
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= width + 1) { return null; }
  const clipped = el => {  // inside a scroll box, or in a drawer fixed off screen
    if (getComputedStyle(el).position === 'fixed') { return true; }
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (['auto', 'scroll', 'hidden'].includes(style.overflowX) || style.position === 'fixed') { return true; }
    }
    return false;
  };
  const label = el => el.tagName.toLowerCase() + '.' + el.className + ': ' + (el.textContent || '').trim().slice(0, 40);
  return Array.from(document.querySelectorAll('body *'))
    .filter(el => el.getBoundingClientRect().right > width + 1 && !clipped(el))
    .filter((el, _, all) => !all.some(other => other !== el && el.contains(other)))
    .slice(0, 3).map(label);
}
"""


# Runs in the page at phone width: the claims ledger's rows whose claim id or verdict a reader cannot see on the
# screen (a cell missing, empty, or off the screen's left or right edge; a scrolling box does not help).
LEDGER_PROBE = """
() => {
  const width = document.documentElement.clientWidth;
  const unreadable = el => {
    if (!el) { return true; }
    const r = el.getBoundingClientRect();
    return r.width === 0 || r.left < 0 || r.right > width + 1;
  };
  return Array.from(document.querySelectorAll('table.lorapriv-ledger > tbody > tr'))
    .filter(tr => !tr.hidden)
    .filter(tr => unreadable(tr.querySelector('td.col-claim')) || unreadable(tr.querySelector('td.col-verdict')))
    .map(tr => tr.id || tr.textContent.trim().slice(0, 30));
}
"""


# Runs in the page at desktop width: the claims ledger's columns that lie beyond its box (a reader would have to
# scroll the table sideways to see them), by header.
LEDGER_COLUMNS_PROBE = """
() => Array.from(document.querySelectorAll('table.lorapriv-ledger > thead th')).filter(th => {
  const box = th.closest('table').getBoundingClientRect();
  return th.getBoundingClientRect().right > box.right + 1;
}).map(th => th.textContent.trim())
"""


# Runs in the page: how many notebook tables print pandas' 0..N row index as their first column.
INDEX_PROBE = """
() => Array.from(document.querySelectorAll('.cell_output table')).filter(table => {
  const rows = Array.from(table.querySelectorAll('tbody tr'));
  return rows.length > 0 && rows.every((tr, k) => {
    const first = tr.firstElementChild;
    return first && first.tagName === 'TH' && first.textContent.trim() === String(k);
  });
}).length
"""


# Runs in the page: verdict badges that name no claim (neither a link whose tooltip names it, nor a ledger row with
# its claim id, nor the tally's legend of statuses).
BADGE_PROBE = """
() => Array.from(document.querySelectorAll('.lorapriv-verdict')).filter(badge => {
  const link = badge.closest('a[title]');
  if (link && /^claim \\S+/.test(link.getAttribute('title'))) { return false; }
  const row = badge.closest('tr');
  if (row && row.querySelector('td.col-claim')) { return false; }
  return !badge.closest('.lorapriv-tally');
}).map(badge => badge.textContent.trim())
"""


# Runs in the page at phone width: where its answer box (the takeaway that opens a page) and the tally of
# verdicts end, and the box's words (its title left out).  Every answer box stays short; on the landing page the
# first screen holds both.
ANSWER_WORDS = 90
ANSWER_PROBE = """
() => {
  const box = document.querySelector('.admonition.takeaway');
  const tally = document.querySelector('.lorapriv-tally');
  const title = box && box.querySelector('.admonition-title');
  const count = el => el ? el.innerText.split(/\\s+/).filter(Boolean).length : 0;
  return {box: box ? box.getBoundingClientRect().bottom + window.scrollY : null,
          tally: tally ? tally.getBoundingClientRect().bottom + window.scrollY : null,
          words: count(box) - count(title)};
}
"""


# Runs in the page (at each width): the tables whose caption is cut, and (``numbers``: on the book's own pages, whose
# tables a reader is meant to read there; a notebook page's wide tables may scroll in their box) those whose first
# number a reader cannot see without scrolling a box sideways.  A number is a cell that starts with one; a table of
# text alone, or one hidden in a closed fold, is not judged.  A caption is the table's own <caption> or the
# <figcaption> of the figure that holds it.
TABLE_PROBE = """
(numbers) => {
  const width = document.documentElement.clientWidth;
  const shown = el => {  // whether el's text lies where a reader sees it without scrolling: the screen less its boxes
    const range = document.createRange();
    range.selectNodeContents(el);
    const r = range.getBoundingClientRect();
    let left = Math.max(0, r.left), right = Math.min(width, r.right);
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(a).overflowX)) {
        const box = a.getBoundingClientRect();
        left = Math.max(left, box.left);
        right = Math.min(right, box.right);
      }
    }
    return r.left >= left - 1 && r.right <= right + 1;
  };
  const out = [];
  for (const table of document.querySelectorAll('article table')) {
    if (table.getBoundingClientRect().width === 0 || table.closest('table.lorapriv-ledger')) { continue; }
    const figure = table.closest('figure');
    const caption = table.querySelector(':scope > caption') || (figure && figure.querySelector(':scope > figcaption'));
    const name = (caption || table).textContent.trim().replace(/\\s+/g, ' ').slice(0, 50);
    if (caption && !shown(caption)) { out.push(`a table's caption is cut: ${name}`); }
    const number = td => /^[-+\u2212]?[.]?\\d/.test(td.textContent.trim());
    const cell = Array.from(table.querySelectorAll('tbody td')).find(number);
    if (numbers && cell && !shown(cell)) { out.push(`a table's first number is off the screen: ${name}`); }
  }
  return out;
}
"""


# Runs in the page at phone width, scrolled to its top: the text a reader sees on the first screen of the page's
# article.  A page that reports results shows a number there (a decimal, a percentage or a number of two digits or
# more; a section's single digit does not count).
FIRST_SCREEN_PROBE = """
() => {
  const height = window.innerHeight;
  const article = document.querySelector('article') || document.body;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  let text = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const box = node.parentElement && node.parentElement.getBoundingClientRect();
    if (box && box.width > 0 && box.bottom > 0 && box.top < height) { text += ' ' + node.textContent; }
  }
  return text;
}
"""
NUMBER = re.compile(r"\d[.,]\d|\d\s?%|\b\d{2,}\b")
NO_NUMBER_NEEDED = {"genindex.html", "search.html"}  # Sphinx's generated index and search pages


# Runs in the page: every figure image of the article, with every toggle opened, as the URL of its file and the
# width it is shown at (CSS px).  figure_problems reads the file for the rest.
FIGURE_PROBE = """
() => {
  document.querySelectorAll('article details').forEach(d => { d.open = true; });
  return Array.from(document.querySelectorAll('article img')).map(img => [img.currentSrc || img.src,
    img.getBoundingClientRect().width]);
}
"""
MIN_TEXT_PX = 9.0  # plots.MIN_TEXT_PX: the tools do not import the package
_TEXT_RECORD = re.compile(rb"lorapriv figure: smallest text ([0-9.]+) pt")
_SVG_WIDTH = re.compile(rb'<svg[^>]*\swidth="([0-9.]+)pt"')


def figure_width_in(data: bytes) -> float | None:
    """A matplotlib figure file's natural width in inches (an SVG's width in pt; a PNG's pixels over its pHYs
    density), or None for an image that matplotlib did not draw."""
    if b"atplotlib" not in data:
        return None
    if data.startswith(b"\x89PNG"):
        width = int.from_bytes(data[16:20], "big")
        at = data.find(b"pHYs")
        per_metre = int.from_bytes(data[at + 4 : at + 8], "big") if at > 0 else 0
        return width / (per_metre * 0.0254) if per_metre else None
    match = _SVG_WIDTH.search(data)
    return float(match.group(1)) / 72 if match else None


def figure_problems(root: Path, shown: list[list], width: int) -> list[str]:
    """The figures (``shown``: URL and shown width, from FIGURE_PROBE) whose text renders below MIN_TEXT_PX CSS px
    at this screen ``width``, or which do not record their smallest text (plots.save_figure and the notebooks'
    inline PNGs do)."""
    problems = []
    for src, px in shown:
        path = root / unquote(urlsplit(src).path).lstrip("/")
        if px <= 0 or not path.is_file() or path.suffix not in (".svg", ".png"):
            continue
        data = path.read_bytes()
        inches = figure_width_in(data)
        if inches is None:
            continue
        record = _TEXT_RECORD.search(data)
        if record is None:
            problems.append(f"figure {path.name} does not record its text size (draw it through lorapriv_utils.plots)")
            continue
        text_px = float(record.group(1)) / 72 * px / inches
        if text_px < MIN_TEXT_PX:
            problems.append(
                f"figure text renders at {text_px:.1f} px, below {MIN_TEXT_PX:g} px: {path.name} ({width} px)"
            )
    return problems


def answer_problems(probe: dict, height: int, landing: bool) -> list[str]:
    """What keeps a page's answer short, and (``landing``) the landing page's first phone screen from answering:
    its answer box or tally ending below it."""
    problems = []
    for part, name in (("box", "answer box"), ("tally", "tally of verdicts")) if landing else ():
        if probe[part] is None or probe[part] > height:
            problems.append(f"the {name} does not end on the first phone screen (at {probe[part]} px of {height})")
    if probe["words"] > ANSWER_WORDS:
        problems.append(f"the answer box has {probe['words']} words, over {ANSWER_WORDS}")
    return problems


def launch_problems(links: list[str]) -> list[str]:
    """What is wrong with a notebook page's launch links: Binder, which builds the repository (the package and the
    committed results with it), must open this notebook; Colab, which would open the notebook alone, without
    either, must not be offered."""
    binder = [u for u in links if urlsplit(u).netloc == "mybinder.org"]
    colab = [u for u in links if urlsplit(u).netloc == "colab.research.google.com"]
    problems = [] if binder else ["no Binder launch link"]
    for url in binder:
        parts = urlsplit(url)
        if not parts.path.startswith("/v2/gh/") or ".ipynb" not in unquote(parts.query + parts.path):
            problems.append(f"malformed Binder link {url}")
        if "/./" in unquote(parts.query + parts.path):
            problems.append(f"a /./ in the Binder link {url}")
    problems += [f"a Colab launch link, which cannot run the notebook without the package: {url}" for url in colab]
    return problems


class _IdCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs) -> None:
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)


# a meta refresh's content: a delay in seconds, then optionally the target, with or without "url="
REFRESH = re.compile(r"\s*(\d+)[\d.]*\s*(?:[;,]\s*(?:url\s*=\s*)?(['\"]?)(.*?)\2)?\s*$", re.IGNORECASE)


class _RefreshFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refresh: str | None = None

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "refresh" and self.refresh is None:
            self.refresh = attrs.get("content") or ""  # the browser obeys the first


def _redirect(path: Path) -> str | None:
    """The target of a page that only forwards, at once (a meta refresh with delay 0, like the root index.html),
    else None.  Such a page navigates away on its own while it is probed, so it is judged by its target alone."""
    parser = _RefreshFinder()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    match = REFRESH.fullmatch(parser.refresh or "")
    if match is None or int(match.group(1)) != 0 or not match.group(3):
        return None
    return match.group(3).strip()


@functools.cache
def _anchors(path: Path) -> frozenset[str]:
    parser = _IdCollector()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.ids)


def _serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _pages(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html") if not SKIP_DIRS & set(p.relative_to(root).parts[:-1]))


def _link_problem(root: Path, base: str, href: str) -> str | None:
    parts = urlsplit(href)
    if not href.startswith(base) or parts.path.endswith("/_sources/"):
        return None  # another host (not fetched offline) or a scheme like mailto:
    target = root / unquote(parts.path[len(urlsplit(base).path) :])
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return f"broken link to {href} (no file {target.relative_to(root)})"
    if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _anchors(target):
        return f"broken link to {href} (no anchor #{parts.fragment} in {target.relative_to(root)})"
    return None


def check_site(root: Path, chromium: str) -> list[str]:
    """All problems found on all pages under ``root``, as readable one-line messages."""
    from playwright.sync_api import sync_playwright

    root = root.resolve()
    if not (root / "index.html").is_file():
        return [f"{root} has no index.html: build the book first (make book)"]
    server, base = _serve(root)
    problems: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for path in _pages(root):
                rel = path.relative_to(root).as_posix()
                url = urljoin(base, rel)
                target = _redirect(path)
                if target is not None:  # another host is not followed offline, as for links
                    forward = urljoin(url, target)
                    problem = (
                        "forwards to itself" if forward.split("#")[0] == url else _link_problem(root, base, forward)
                    )
                    problems += [f"{rel}: redirect: {problem}"] if problem else []
                    continue
                found: list[str] = []
                page = browser.new_page()
                page.on("pageerror", lambda exc, found=found: found.append(f"JavaScript error: {exc}"))
                page.on(
                    "console",
                    lambda msg, found=found: (
                        found.append(f"console error: {msg.text} ({msg.location.get('url')})")
                        if msg.type == "error"
                        else None
                    ),
                )
                page.on(
                    "requestfailed", lambda req, found=found: found.append(f"request failed: {req.url} ({req.failure})")
                )
                page.on(
                    "response",
                    lambda resp, found=found: (
                        found.append(f"HTTP {resp.status} for {resp.url}") if resp.status >= 400 else None
                    ),
                )
                page.set_viewport_size(DESKTOP)
                page.goto(url, wait_until="load")
                probe = page.evaluate(PAGE_PROBE)
                numbers = rel.startswith("book/") or "/" not in rel  # the book's pages (not the notebooks')
                found += [f"{message} ({DESKTOP['width']} px)" for message in page.evaluate(TABLE_PROBE, numbers)]
                hidden = page.evaluate(LEDGER_COLUMNS_PROBE)
                if hidden:
                    found.append(
                        f"claims-ledger columns off the table's box at {DESKTOP['width']} px: {', '.join(hidden)}"
                    )
                anonymous = page.evaluate(BADGE_PROBE)
                if anonymous:
                    found.append(f"{len(anonymous)} verdict badges name no claim: {', '.join(anonymous[:3])}")
                indexed = page.evaluate(INDEX_PROBE)
                if indexed:
                    found.append(f"{indexed} notebook tables show a 0..N row index (display them with display_table)")
                page.set_viewport_size(PHONE)
                page.wait_for_timeout(100)
                overflow = page.evaluate(OVERFLOW_PROBE)
                found += [f"{message} ({PHONE['width']} px)" for message in page.evaluate(TABLE_PROBE, numbers)]
                page.evaluate("window.scrollTo(0, 0)")
                if rel not in NO_NUMBER_NEEDED and not NUMBER.search(page.evaluate(FIRST_SCREEN_PROBE)):
                    found.append(f"no number on the first phone screen ({PHONE['width']} x {PHONE['height']} px)")
                landing = rel == SCREENSHOT_PAGES["landing"]
                found += answer_problems(page.evaluate(ANSWER_PROBE), PHONE["height"], landing)
                unreadable = page.evaluate(LEDGER_PROBE)
                found += figure_problems(root, page.evaluate(FIGURE_PROBE), PHONE["width"])
                page.set_viewport_size(DESKTOP)
                page.wait_for_timeout(100)
                found += figure_problems(root, page.evaluate(FIGURE_PROBE), DESKTOP["width"])
                page.close()
                if unreadable:
                    found.append(
                        f"{len(unreadable)} claims-ledger rows whose claim or verdict cannot be read at "
                        f"{PHONE['width']} px: {', '.join(unreadable[:3])}"
                    )
                if overflow is not None:
                    found.append(f"wider than a phone screen ({PHONE['width']} px): {'; '.join(overflow) or 'page'}")
                found += [f"Markdown table syntax shown as text: {t!r}" for t in probe["markdown"]]
                found += [
                    f"two elements share the id {name!r} (a link to it cannot tell them apart)"
                    for name in probe["twice"]
                ]
                found += [f"raw Python dict printed as a result: {t!r}" for t in probe["dicts"]]
                if probe["notebook"]:
                    found += launch_problems(probe["launch"])
                found += [f"math not rendered: {t!r}" for t in probe["unrendered"]]
                found += [f"MathJax error: {t!r}" for t in probe["merrors"]]
                found += [f"image did not load: {src}" for src in probe["images"]]
                found += sorted({p for p in (_link_problem(root, base, h) for h in probe["links"]) if p})
                problems += [f"{rel}: {msg}" for msg in found]
            browser.close()
    finally:
        server.shutdown()
    return problems


def screenshots(root: Path, chromium: str, out: Path) -> list[str]:
    """Save the SCREENSHOT_PAGES at desktop and phone widths into ``out``; problems found on the way."""
    from playwright.sync_api import sync_playwright

    root = root.resolve()
    out.mkdir(parents=True, exist_ok=True)
    server, base = _serve(root)
    problems: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for name, rel in SCREENSHOT_PAGES.items():
                for device, size in (("desktop", DESKTOP), ("phone", PHONE)):
                    page = browser.new_page(viewport=size)
                    page.goto(urljoin(base, rel), wait_until="load")
                    page.evaluate(PAGE_PROBE)  # waits for MathJax
                    page.screenshot(path=str(out / f"{name}-{device}.png"))
                    overflow = page.evaluate(OVERFLOW_PROBE)
                    if overflow is not None:
                        problems.append(f"{rel} ({device}): wider than the screen: {'; '.join(overflow) or 'page'}")
                    if name == "landing":
                        top = page.evaluate(
                            "() => { const el = document.querySelector('.admonition.takeaway');"
                            " return el ? el.getBoundingClientRect().top : null; }"
                        )
                        if top is None or top > size["height"] * 0.6:
                            problems.append(f"{rel} ({device}): the answer box is not on the first screen (top {top})")
                    page.close()
            browser.close()
    finally:
        server.shutdown()
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--screenshots", type=Path, help="also save screenshots of key pages into this folder")
    args = parser.parse_args()
    if not Path(args.chromium).exists():
        print(
            f"no Chromium at {args.chromium}: install Debian's chromium package (apt-get install chromium) "
            "or pass --chromium PATH",
            file=sys.stderr,
        )
        return 2
    problems = check_site(args.root, args.chromium)
    if args.screenshots:
        problems += screenshots(args.root, args.chromium, args.screenshots)
        print(f"screenshots in {args.screenshots}")
    for line in problems:
        print(line)
    pages = len(_pages(args.root.resolve())) if args.root.is_dir() else 0
    print(f"browser check: {pages} pages, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
