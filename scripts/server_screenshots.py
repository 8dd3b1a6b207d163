"""Screenshots of the web page's main views (docs/img/server-*.png) over a corpus.

Serves CORPUS with uvicorn on a free loopback port and drives Debian's headless Chromium with
Playwright through a search, a paper's related papers and citation recommendation:

    python scripts/server_screenshots.py /tmp/taln --model muse-v3 \
        --query "analyse syntaxique en dépendances du français" --out docs/img
    python scripts/server_screenshots.py demo-corpus --model e5-small-multilingual \
        --query "florestas secundárias e briófitas do Brasil" --paper 10.1590/2236-8906-76-2021 \
        --paragraph openmsd/data/demo-paragraph.md --name demo --out docs/img
"""

from __future__ import annotations

import argparse
import os
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import uvicorn
from playwright.sync_api import sync_playwright

from openmsd.server import create_app

PARAGRAPH = ("Les analyseurs syntaxiques statistiques du français ont beaucoup progressé "
             "depuis la création du corpus arboré de Paris 7 [4]. Nous annotons ensuite les "
             "entités nommées avec un étiqueteur à base de CRF (Lafferty et al., 2001). "
             "Enfin, la traduction automatique des termes s'appuie sur des corpus "
             "comparables \\cite{morin2007}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--model", default="muse-v3")
    parser.add_argument("--query", default="analyse syntaxique en dépendances du français")
    parser.add_argument("--paper", help="The paper to show (default: the first result).")
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    parser.add_argument("--name", default="server", help="File name prefix: NAME-search.png, "
                        "NAME-paper.png, NAME-recommend.png.")
    parser.add_argument("--paragraph", type=Path, help="The text to recommend citations for "
                        "(default: a French paragraph on TALN topics).")
    args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(args.corpus, [args.model]),
                                           host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox"] if os.geteuid() == 0 else [])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/?{urlencode({'q': args.query})}")
        page.screenshot(path=args.out / f"{args.name}-search.png")
        first = page.locator("li.result a.title").first.get_attribute("href")
        page.goto(f"{base}/papers/{args.paper}" if args.paper else base + first)
        page.check("li.result input.pick >> nth=0")
        page.check("li.result input.pick >> nth=1")
        page.click("#export-bibtex")
        page.wait_for_selector("#bibtex-out:not([hidden])")
        page.screenshot(path=args.out / f"{args.name}-paper.png", full_page=True)
        page.goto(f"{base}/recommend")
        page.fill("#text", args.paragraph.read_text(encoding="utf-8") if args.paragraph
                  else PARAGRAPH)
        page.click("#recommend")
        page.wait_for_selector("div.location")
        page.screenshot(path=args.out / f"{args.name}-recommend.png", full_page=True)
        browser.close()
    server.should_exit = True
    views = ("search", "paper", "recommend")
    print("wrote " + ", ".join(str(args.out / f"{args.name}-{view}.png") for view in views))


if __name__ == "__main__":
    main()
